#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The requests of `latchkey login` for the authorization code and device grants, with the
// identity's endpoints (configured, or from the issuer's metadata) and client
// authentication. Scope and audience travel with the front-channel request (the
// authorization URL, the device authorization request); resource indicators go with both,
// as RFC 8707 §2.1 and §2.2 allow.
extension OAuthTokenSource {
    /// Where the browser is sent: `configured`, else the issuer's `authorization_endpoint`.
    func authorizationEndpoint(configured: String?, now: Date) async throws(AcquisitionFailure) -> String {
        if let configured { return configured }
        return try await discoveredEndpoint(\.authorizationEndpoint, named: "authorization_endpoint", now: now)
    }

    /// The authorization request for one login attempt, before its PKCE pair and state
    /// are known to anyone else.
    func authorizationRequest(endpoint: String, redirectURI: String, state: String, pkce: PKCE) -> AuthorizationRequest {
        AuthorizationRequest(
            authorizationEndpoint: endpoint, clientID: config.clientID ?? "", redirectURI: redirectURI, scope: config.scope,
            state: state, codeChallenge: pkce.challenge, extraParameters: frontChannelParameters)
    }

    /// RFC 8628 §3.1, authenticated as at the token endpoint.
    func deviceAuthorizationRequest(configured: String?, now: Date) async throws(AcquisitionFailure) -> DeviceAuthorizationRequest {
        let endpoint: String
        if let configured {
            endpoint = configured
        } else {
            endpoint = try await discoveredEndpoint(\.deviceAuthorizationEndpoint, named: "device_authorization_endpoint", now: now)
        }
        guard let clientAuthentication = try await clientAuthenticationAsAtTokenEndpoint(otherwise: endpoint, now: now) else {
            throw AcquisitionFailure(.rejected, "identity \(config.name) has no client_id")
        }
        return DeviceAuthorizationRequest(endpoint: endpoint, clientAuthentication: clientAuthentication, scope: config.scope,
                                          extraFields: frontChannelParameters)
    }

    /// How the client authenticates at another endpoint (device authorization,
    /// revocation): as at the token endpoint, whose URL a private_key_jwt assertion names
    /// as its audience (RFC 7523 §3: it identifies the authorization server); `otherwise`
    /// stands in for it when the identity has none.
    func clientAuthenticationAsAtTokenEndpoint(otherwise: String, now: Date) async throws(AcquisitionFailure) -> ClientAuthentication? {
        var endpoint = config.tokenURL
        if endpoint == nil { endpoint = try await discoveredTokenEndpoint(now: now) }
        return try clientAuthentication(endpoint: endpoint ?? otherwise, secrets: credentials.snapshot)
    }

    /// The token request that redeems what a login obtained (a code, a device code).
    func loginTokenRequest(_ grant: TokenGrant, now: Date) async throws(AcquisitionFailure) -> TokenRequest {
        var endpoint = config.tokenURL
        if endpoint == nil { endpoint = try await discoveredTokenEndpoint(now: now) }
        guard let endpoint else { throw AcquisitionFailure(.rejected, "identity \(config.name) has no token endpoint") }
        return TokenRequest(endpoint: endpoint, grant: grant,
                            clientAuthentication: try clientAuthentication(endpoint: endpoint, secrets: credentials.snapshot),
                            resources: config.resources)
    }

    /// Auth0's `audience`, then the RFC 8707 `resource` indicators.
    private var frontChannelParameters: [(String, String)] {
        (config.audience.map { [("audience", $0)] } ?? []) + config.resources.map { ("resource", $0) }
    }
}
