import LatchkeyAuth
import LatchkeyConfig

extension IssuedToken {
    /// What an injection of this identity attaches: the capture it names (a recipe's
    /// `{session_id}`), else the token itself. Nil when the token holds no such capture:
    /// `Route.missingCapture` refuses the request before it gets here.
    func value(for injection: Injection) -> String? {
        guard let capture = injection.capture else { return accessToken }
        return captures[capture]
    }
}

extension Injection {
    /// What this injection attaches: its credential's value, or the identity's `token`.
    func value(credentials: CredentialSnapshot, token: IssuedToken?) -> String? {
        switch source {
        case .credential(let name): credentials[name]
        case .identity: token?.value(for: self)
        }
    }
}
