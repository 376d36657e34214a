#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig

/// A token stored by hand (Kii's manual login). "Acquiring" it reads the secret, which the
/// credential store re-reads when its file changes; it is never refreshed, and a refusal
/// goes back to the client.
public struct StaticTokenSource: TokenSource {
    let identity: String
    let credentials: CredentialStore

    public init(identity: String, credentials: CredentialStore) {
        self.identity = identity
        self.credentials = credentials
    }

    public var canGrant: Bool { true }
    public var renewable: Bool { false }

    public func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
        guard let token = credentials[IdentityConfig.secretName(identity: identity, "token")] else {
            throw AcquisitionFailure(.transient, "the token of identity \(identity) has no value")
        }
        let expiresAt = JWTClaims.expiry(of: token)
        if let expiresAt, expiresAt <= now {
            // Handing it out again would only fetch it again at once.
            throw AcquisitionFailure(.transient, "the stored token of identity \(identity) has expired; store a new one")
        }
        return TokenSet(accessToken: token, expiresAt: expiresAt, obtainedAt: now)
    }
}
