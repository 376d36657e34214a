import Foundation
import LatchkeyHTTP
import Testing
@testable import LatchkeyAuth

@Suite struct DiscoveryDocumentTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func wellKnownURLsForAnIssuerWithoutPath() {
        let expected = ["https://accounts.google.com/.well-known/openid-configuration",
                        "https://accounts.google.com/.well-known/oauth-authorization-server"]
        #expect(DiscoveryDocument.wellKnownURLs(forIssuer: "https://accounts.google.com") == expected)
        #expect(DiscoveryDocument.wellKnownURLs(forIssuer: "https://accounts.google.com/") == expected)
    }

    /// RFC 8414 §3.1's example; OIDC Discovery §4.1 appends to the path.
    @Test func wellKnownURLsForAnIssuerWithPath() {
        #expect(DiscoveryDocument.wellKnownURLs(forIssuer: "https://example.com/issuer1") == [
            "https://example.com/issuer1/.well-known/openid-configuration",
            "https://example.com/.well-known/oauth-authorization-server/issuer1",
        ])
        #expect(DiscoveryDocument.wellKnownURLs(forIssuer: "http://127.0.0.1:8000/realms/dev/") == [
            "http://127.0.0.1:8000/realms/dev/.well-known/openid-configuration",
            "http://127.0.0.1:8000/.well-known/oauth-authorization-server/realms/dev",
        ])
    }

    @Test func issuersWithoutWellKnownURLs() {
        for issuer in ["https://example.com/?tenant=a", "https://example.com/#x", "ftp://example.com", "example.com/issuer",
                       "https://user@example.com", ""] {
            #expect(DiscoveryDocument.wellKnownURLs(forIssuer: issuer).isEmpty, "\(issuer)")
        }
    }

    private func response(_ json: String) -> AuthHTTPResponse {
        AuthHTTPResponse(status: 200, fields: ["Content-Type": "application/json"], body: Array(json.utf8))
    }

    @Test func parsesOpenIDMetadata() throws {
        let json = """
            {"issuer":"https://dev-abc.us.auth0.com/","authorization_endpoint":"https://dev-abc.us.auth0.com/authorize",
             "token_endpoint":"https://dev-abc.us.auth0.com/oauth/token","device_authorization_endpoint":"https://dev-abc.us.auth0.com/oauth/device/code",
             "userinfo_endpoint":"https://dev-abc.us.auth0.com/userinfo","revocation_endpoint":"https://dev-abc.us.auth0.com/oauth/revoke",
             "jwks_uri":"https://dev-abc.us.auth0.com/.well-known/jwks.json","code_challenge_methods_supported":["S256","plain"],
             "scopes_supported":["openid","profile"]}
            """
        let document = try DiscoveryDocument.parse(response(json), issuer: "https://dev-abc.us.auth0.com/", now: now)
        #expect(document.tokenEndpoint == "https://dev-abc.us.auth0.com/oauth/token")
        #expect(document.authorizationEndpoint == "https://dev-abc.us.auth0.com/authorize")
        #expect(document.deviceAuthorizationEndpoint == "https://dev-abc.us.auth0.com/oauth/device/code")
        #expect(document.userinfoEndpoint == "https://dev-abc.us.auth0.com/userinfo")
        #expect(document.revocationEndpoint == "https://dev-abc.us.auth0.com/oauth/revoke")
        #expect(document.introspectionEndpoint == nil)
        #expect(document.codeChallengeMethodsSupported == ["S256", "plain"])
        // A trailing slash is not another issuer.
        #expect(try DiscoveryDocument.parse(response(json), issuer: "https://dev-abc.us.auth0.com", now: now) == document)
    }

    /// RFC 8414 §3.3: another issuer's document is refused.
    @Test func issuerMismatch() {
        let json = #"{"issuer":"https://evil.example","token_endpoint":"https://evil.example/token"}"#
        let error = #expect(throws: TokenEndpointError.self) {
            try DiscoveryDocument.parse(response(json), issuer: "https://idp.example", now: now)
        }
        #expect(error == .issuerMismatch(expected: "https://idp.example", found: "https://evil.example"))
        #expect(error?.isRetryable == false)
        #expect(throws: TokenEndpointError.invalidResponse(status: 200, reason: "its JSON has no issuer")) {
            try DiscoveryDocument.parse(response(#"{"token_endpoint":"https://idp.example/token"}"#), issuer: "https://idp.example", now: now)
        }
    }
}
