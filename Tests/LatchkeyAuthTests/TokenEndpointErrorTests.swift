import Foundation
import LatchkeyHTTP
import Testing
@testable import LatchkeyAuth

/// Error answers as real servers and the proxies in front of them send them.
@Suite struct TokenEndpointErrorTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func error(_ status: Int, _ body: String, _ fields: HTTPFields = ["Content-Type": "application/json"]) -> TokenEndpointError? {
        #expect(throws: TokenEndpointError.self) {
            try TokenResponse.parse(AuthHTTPResponse(status: status, fields: fields, body: Array(body.utf8)), now: now)
        }
    }

    /// RFC 6749 §5.2.
    @Test func invalidGrantIsRecognisedAndFinal() throws {
        let failure = try #require(error(400, #"{"error":"invalid_grant","error_description":"The refresh token has expired.","error_uri":"https://idp.example/e"}"#))
        #expect(failure == .oauth(OAuthError(error: "invalid_grant", errorDescription: "The refresh token has expired.",
                                             errorURI: "https://idp.example/e", status: 400)))
        #expect(failure.isInvalidGrant)
        #expect(!failure.isRetryable)
        #expect(failure.status == 400)
        #expect(failure.message == "the authorization server refused the request with invalid_grant (HTTP 400): The refresh token has expired.")
    }

    @Test func otherOAuthErrorsAreNotInvalidGrant() throws {
        let client = try #require(error(401, #"{"error":"invalid_client"}"#))
        #expect(client.oauthCode == .invalidClient && !client.isInvalidGrant && !client.isRetryable)
        let unknown = try #require(error(400, #"{"error":"weird_thing"}"#))
        #expect(unknown.oauthCode == nil && !unknown.isRetryable)
        let unavailable = try #require(error(400, #"{"error":"temporarily_unavailable"}"#))
        #expect(unavailable.isRetryable)
    }

    /// RFC 8628 §3.5.
    @Test(arguments: [
        ("authorization_pending", OAuthError.Code.authorizationPending),
        ("slow_down", .slowDown), ("access_denied", .accessDenied), ("expired_token", .expiredToken),
    ])
    func deviceFlowErrors(error code: String, expected: OAuthError.Code) throws {
        let failure = try #require(error(400, #"{"error":"\#(code)"}"#))
        #expect(failure.oauthCode == expected)
        #expect(!failure.isInvalidGrant)
    }

    /// GitHub answers 200 with an OAuth error body.
    @Test func anOAuthErrorWithA200() throws {
        let failure = try #require(error(200, #"{"error":"bad_verification_code","error_description":"The code passed is incorrect or expired."}"#))
        #expect(failure.oauthCode == nil)
        #expect(failure.status == 200)
        if case .oauth(let oauth) = failure { #expect(oauth.error == "bad_verification_code") } else { Issue.record("\(failure)") }
    }

    /// Podio's error carries the request it refused: none of that reaches the message.
    @Test func podioErrorKeepsOnlyTheStandardFields() throws {
        let body = #"{"error_parameters":{},"error_detail":null,"error_propagate":false,"request":{"url":"http://api.podio.com/oauth/token","query_string":"password=hunter2","method":"POST"},"error_description":"Password is incorrect","error":"invalid_grant"}"#
        let failure = try #require(error(400, body))
        #expect(failure.isInvalidGrant)
        #expect(!failure.message.contains("hunter2"))
    }

    @Test func anHTMLGatewayPageIsNamedByStatusAndTypeOnly() throws {
        let page = "<html><head><title>502 Bad Gateway</title></head><body>upstream sent password=hunter2</body></html>"
        let failure = try #require(error(502, page, ["Content-Type": "text/html", "Retry-After": "30"]))
        #expect(failure == .unexpectedStatus(status: 502, mediaType: "text/html", retryAfter: .seconds(30)))
        #expect(failure.isRetryable)
        #expect(failure.retryAfter == .seconds(30))
        #expect(failure.message == "the authorization server answered HTTP 502 with text/html, not an OAuth response; it asks to retry after 30.0 seconds")
        #expect(!failure.message.contains("hunter2") && !failure.message.contains("Bad Gateway"))
    }

    @Test func aBare429OrA404() throws {
        let limited = try #require(error(429, "", ["Retry-After": "Tue, 14 Nov 2023 22:14:20 GMT"]))
        #expect(limited == .unexpectedStatus(status: 429, mediaType: nil, retryAfter: .seconds(60)))
        #expect(limited.isRetryable)
        let missing = try #require(error(404, "Not Found", ["Content-Type": "text/plain"]))
        #expect(!missing.isRetryable && missing.retryAfter == nil)
    }

    @Test func anOAuthErrorWithA503KeepsRetryAfter() throws {
        let failure = try #require(error(503, #"{"error":"server_error"}"#, ["Content-Type": "application/json", "Retry-After": "7"]))
        #expect(failure.retryAfter == .seconds(7))
        #expect(failure.isRetryable)
    }

    @Test func theServersWordsAreOneShortLine() throws {
        let long = String(repeating: "x", count: 500)
        let failure = try #require(error(400, #"{"error":"invalid_request","error_description":"line one\nline two\r\t\#(long)"}"#))
        #expect(!failure.message.contains("\n") && !failure.message.contains("\r"))
        #expect(failure.message.count < 320)
    }

    /// The request's secrets are cut out of whatever the server quotes back.
    @Test func redactionRemovesTheRequestsSecrets() throws {
        let request = try TokenRequest(
            endpoint: "https://idp.example/token", grant: .password(username: "alice", password: "hunter2"),
            clientAuthentication: .clientSecretBasic(id: "cid", secret: "s3cr3t:x")
        ).httpRequest(options: .init())
        let quoted = OAuthError(error: "invalid_grant", errorDescription: "bad password hunter2 for alice with s3cr3t:x; grant_type password", status: 400)
        let redacted = TokenEndpointError.oauth(quoted).redacting(SecretRedaction(request))
        #expect(redacted.message == "the authorization server refused the request with invalid_grant (HTTP 400): "
            + "bad password [redacted] for [redacted] with [redacted]; grant_type password")
    }

    @Test func transportFailuresAreRetryableUnlessStoppedByUs() {
        #expect(TokenEndpointError.transport(AuthHTTPError(.connectFailed, detail: "refused")).isRetryable)
        #expect(TokenEndpointError.transport(AuthHTTPError(.timeout, detail: "slow")).isRetryable)
        #expect(!TokenEndpointError.transport(.cancelled).isRetryable)
        #expect(!TokenEndpointError.transport(.shutdown).isRetryable)
        #expect(!TokenEndpointError.responseTooLarge(limit: 10).isRetryable)
        #expect(TokenEndpointError.transport(AuthHTTPError(.tls, detail: "bad cert")).message
            == "cannot get an answer from the authorization server: tls: bad cert")
    }
}
