import LatchkeyConfig

extension IdentityConfig {
    /// Whether the identity's tokens go to the token store. A static token is not kept:
    /// it lives in its own secret, which is re-read when it changes.
    public var keepsTokens: Bool {
        if case .staticToken = grant { return false }
        return true
    }

    /// Whether the identity gets a new token without a person, from its own credentials
    /// (a password, a client secret, a signed assertion…). Not a seeded refresh token,
    /// which only renews, nor the grants of `latchkey login`.
    public var grantsByItself: Bool {
        if case .refreshToken = grant { return false }
        return !logsInInteractively
    }
}
