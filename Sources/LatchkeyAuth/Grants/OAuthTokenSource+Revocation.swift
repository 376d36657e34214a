#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The revocation of `latchkey logout` (RFC 7009), with the identity's client
// authentication.
extension OAuthTokenSource {
    /// Where tokens are revoked: `revocation_url`, else the issuer's
    /// `revocation_endpoint`; nil when neither names one.
    func revocationEndpoint(now: Date) async throws(AcquisitionFailure) -> String? {
        if let configured = config.revocationURL { return configured }
        guard let issuer = config.issuer else { return nil }
        return try await discoveryDocument(issuer: issuer, now: now).revocationEndpoint
    }

    /// What a revocation did with each token.
    struct Revocation: Sendable, Equatable {
        /// "refresh token", "access token": what the server revoked.
        var revoked: [String] = []
        /// The server said it does not revoke this kind (RFC 7009 §2.2.1
        /// `unsupported_token_type`), as IdPs that revoke refresh tokens only do.
        var unsupported: [String] = []
        /// Why the revocation stopped; never a token.
        var failure: String?
    }

    /// Revokes the refresh token first (RFC 7009 §2.1: the server should then drop the
    /// access tokens of the same grant too), then the access token, which not every
    /// server does. Stops at the first failure but `unsupported_token_type`.
    func revoke(_ token: TokenSet, at endpoint: String, now: Date) async -> Revocation {
        var revocation = Revocation()
        let clientAuthentication: ClientAuthentication?
        do {
            clientAuthentication = try await clientAuthenticationAsAtTokenEndpoint(otherwise: endpoint, now: now)
        } catch {
            revocation.failure = error.message
            return revocation
        }
        let tokens = [(token.refreshToken, "refresh_token", "refresh token"), (token.accessToken, "access_token", "access token")]
        for case let (value?, hint, kind) in tokens where !value.isEmpty {
            let submission = TokenSubmission(endpoint: endpoint, token: value, tokenTypeHint: hint, clientAuthentication: clientAuthentication)
            do {
                try await revokeToken(submission, client: client, options: config.idpOptions, now: now)
                revocation.revoked.append(kind)
            } catch where error.oauthCode == .unsupportedTokenType {
                revocation.unsupported.append(kind)
            } catch {
                revocation.failure = "the \(kind): \(error.message)"
                break
            }
        }
        return revocation
    }
}
