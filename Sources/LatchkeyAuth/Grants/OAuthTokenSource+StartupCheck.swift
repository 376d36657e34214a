#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension OAuthTokenSource {
    /// Asks the configured endpoint whether the IdP still accepts a restored token: an
    /// Auth0 token revoked, or signed with a rotated key, while Latchkey was down.
    public func check(_ token: TokenSet, now: Date) async throws(AcquisitionFailure) -> TokenValidity? {
        guard let startupCheck = config.startupCheck else { return nil }
        switch startupCheck {
        case .userinfo(let configured):
            let endpoint = try await configuredOrDiscovered(configured, \.userinfoEndpoint, named: "userinfo_endpoint", now: now)
            return try await asTransient { () async throws(TokenEndpointError) -> TokenValidity in
                try await checkToken(token.accessToken, userinfoEndpoint: endpoint, client: client, options: config.idpOptions, now: now)
            }
        case .introspection(let configured):
            let endpoint = try await configuredOrDiscovered(configured, \.introspectionEndpoint, named: "introspection_endpoint", now: now)
            let submission = TokenSubmission(
                endpoint: endpoint, token: token.accessToken, tokenTypeHint: "access_token",
                clientAuthentication: try clientAuthentication(endpoint: endpoint, secrets: credentials.snapshot))
            return try await asTransient { () async throws(TokenEndpointError) -> TokenValidity in
                try await introspectToken(submission, client: client, options: config.idpOptions, now: now)
            }
        }
    }

    /// A check the IdP could not answer says nothing about the token: the caller keeps it.
    private func asTransient<T>(_ call: () async throws(TokenEndpointError) -> T) async throws(AcquisitionFailure) -> T {
        do {
            return try await call()
        } catch {
            throw AcquisitionFailure(.transient, error.message, retryAfter: error.retryAfter)
        }
    }

    private func configuredOrDiscovered(
        _ configured: String?, _ endpoint: KeyPath<DiscoveryDocument, String?>, named name: String, now: Date
    ) async throws(AcquisitionFailure) -> String {
        if let configured { return configured }
        return try await discoveredEndpoint(endpoint, named: name, now: now)
    }
}
