#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyHTTP
import LatchkeyUpstream

/// Whether the server still accepts an access token, as Auth0's SDKs check a stored token
/// on start before using it.
public enum TokenValidity: Sendable, Equatable {
    case valid
    /// Expired or revoked: worth renewing before any request carries it.
    case invalid
}

/// Asks the OIDC userinfo endpoint (OIDC Core §5.3) with the token as a Bearer
/// credential: 2xx is `.valid`, 401 `.invalid`, anything else an error (the server could
/// not say).
public func checkToken(
    _ accessToken: String, userinfoEndpoint: String, client: AuthHTTPClient, options: UpstreamOptions, now: Date
) async throws(TokenEndpointError) -> TokenValidity {
    let fields: HTTPFields = ["Authorization": "Bearer " + accessToken, "Accept": "application/json"]
    let request = AuthHTTPRequest(method: "GET", url: userinfoEndpoint, fields: fields, options: options)
    return try await client.call(request) { response throws(TokenEndpointError) in
        if response.isSuccess { return .valid }
        if response.status == 401 { return .invalid }
        throw OAuthResponse.failure(response, now: now)
    }
}

/// Asks the introspection endpoint (RFC 7662 §2.2): `active` says it. An answer without
/// `active` is an error, not a verdict.
public func introspectToken(
    _ submission: TokenSubmission, client: AuthHTTPClient, options: UpstreamOptions, now: Date
) async throws(TokenEndpointError) -> TokenValidity {
    try await client.call(submission.httpRequest(options: options)) { response throws(TokenEndpointError) in
        try OAuthResponse.decode(IntrospectionAnswer.self, from: response, now: now).active ? .valid : .invalid
    }
}

/// The one member of an introspection answer the check needs; the rest (scope, exp, sub)
/// describe a token Latchkey already holds.
private struct IntrospectionAnswer: Decodable {
    var active: Bool
}
