#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyHTTP
import LatchkeyUpstream

// One call per OAuth endpoint: build the request, send it, read the answer. `now` dates
// what is obtained and reads `Retry-After` dates.

/// Asks the token endpoint for tokens. The result's `refreshToken` is nil when the server
/// issued none; after a refresh, the caller then keeps the one it has (RFC 6749 §6).
public func requestToken(
    _ request: TokenRequest, client: AuthHTTPClient, options: UpstreamOptions, now: Date
) async throws(TokenEndpointError) -> TokenSet {
    try await client.call(request.httpRequest(options: options)) { response throws(TokenEndpointError) in
        try TokenResponse.parse(response, now: now).tokenSet(obtainedAt: now)
    }
}

/// Starts the device flow (RFC 8628 §3.1).
public func requestDeviceAuthorization(
    _ request: DeviceAuthorizationRequest, client: AuthHTTPClient, options: UpstreamOptions, now: Date
) async throws(TokenEndpointError) -> DeviceAuthorization {
    try await client.call(request.httpRequest(options: options)) { response throws(TokenEndpointError) in
        try DeviceAuthorization.parse(response, now: now)
    }
}

/// Revokes a token (RFC 7009 §2.2: any 200 is success, whatever the token's state was).
public func revokeToken(
    _ request: TokenSubmission, client: AuthHTTPClient, options: UpstreamOptions, now: Date
) async throws(TokenEndpointError) {
    try await client.call(request.httpRequest(options: options)) { response throws(TokenEndpointError) in
        guard response.isSuccess else { throw OAuthResponse.failure(response, now: now) }
    }
}

/// Fetches the issuer's metadata from its well-known URLs in turn: a 404 moves on to the
/// next one; anything else is the answer.
public func fetchDiscoveryDocument(
    issuer: String, client: AuthHTTPClient, options: UpstreamOptions, now: Date
) async throws(TokenEndpointError) -> DiscoveryDocument {
    var failure = TokenEndpointError.invalidIssuer(issuer)
    for url in DiscoveryDocument.wellKnownURLs(forIssuer: issuer) {
        let request = AuthHTTPRequest(method: "GET", url: url, fields: ["Accept": "application/json"], options: options)
        do {
            return try await client.call(request) { response throws(TokenEndpointError) in
                try DiscoveryDocument.parse(response, issuer: issuer, now: now)
            }
        } catch where error.status == 404 {
            failure = error
        }
    }
    throw failure
}

extension AuthHTTPClient {
    /// Sends an OAuth request and reads the answer with `read`. Every failure comes back
    /// as a `TokenEndpointError`, with the request's secrets removed from the server's
    /// words.
    func call<T>(
        _ request: AuthHTTPRequest, read: (AuthHTTPResponse) throws(TokenEndpointError) -> T
    ) async throws(TokenEndpointError) -> T {
        let response: AuthHTTPResponse
        do {
            response = try await send(request)
        } catch {
            throw error.code == .responseTooLarge ? .responseTooLarge(limit: request.maxResponseBytes) : .transport(error)
        }
        do {
            return try read(response)
        } catch {
            throw error.redacting(SecretRedaction(request))
        }
    }
}
