import Foundation
import LatchkeyHTTP
import Testing
@testable import LatchkeyAuth

/// Token responses as real servers send them.
@Suite struct TokenResponseTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func parse(_ json: String, status: Int = 200, contentType: String = "application/json;charset=UTF-8") throws -> TokenResponse {
        try TokenResponse.parse(AuthHTTPResponse(status: status, fields: ["Content-Type": contentType], body: Array(json.utf8)), now: now)
    }

    /// RFC 6749 §5.1.
    @Test func rfcExample() throws {
        let response = try parse(#"{"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"example","expires_in":3600,"refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA","example_parameter":"example_value"}"#)
        #expect(response == TokenResponse(accessToken: "2YotnFZFEjr1zCsicMWpAA", tokenType: "example", expiresIn: .seconds(3600),
                                          refreshToken: "tGzv3JOkF0XG5Qx2TlKWIA"))
        let set = response.tokenSet(obtainedAt: now)
        #expect(set.expiresAt == now.addingTimeInterval(3600))
        #expect(set.obtainedAt == now)
        #expect(set.refreshToken == "tGzv3JOkF0XG5Qx2TlKWIA")
    }

    /// Podio: lower-case `bearer` and its `ref` object.
    @Test func podio() throws {
        let set = try parse(#"{"access_token":"a1b2c3","token_type":"bearer","expires_in":28800,"refresh_token":"r9","ref":{"type":"user","id":1234}}"#)
            .tokenSet(obtainedAt: now)
        #expect(set == TokenSet(accessToken: "a1b2c3", tokenType: "bearer", refreshToken: "r9",
                                expiresAt: now.addingTimeInterval(28800), obtainedAt: now))
    }

    /// Google's refresh answer: no new refresh token, so the caller keeps the old one.
    @Test func googleRefreshWithoutRefreshToken() throws {
        let response = try parse("""
            {
              "access_token": "ya29.a0AfB_byC",
              "expires_in": 3599,
              "scope": "https://www.googleapis.com/auth/drive.readonly openid",
              "token_type": "Bearer",
              "id_token": "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"
            }
            """)
        #expect(response.refreshToken == nil)
        #expect(response.scope == "https://www.googleapis.com/auth/drive.readonly openid")
        #expect(response.idToken == "eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
        #expect(response.tokenSet(obtainedAt: now).expiresAt == now.addingTimeInterval(3599))
    }

    @Test func auth0AndDjangoOAuthToolkit() throws {
        let auth0 = try parse(#"{"access_token":"eyJz93a.k4ewd.sig","refresh_token":"v1.MRrT","id_token":"eyJ0X.e30.c2ln","scope":"openid profile offline_access","expires_in":86400,"token_type":"Bearer"}"#)
        #expect(auth0.refreshToken == "v1.MRrT" && auth0.expiresIn == .seconds(86400) && auth0.scope == "openid profile offline_access")
        let dot = try parse(#"{"access_token": "Ad9mYSNzYB8jL7mVFCJHWA0cCawhRa", "expires_in": 36000, "token_type": "Bearer", "scope": "read write", "refresh_token": "bKtOnFWGzCtf4eyNKFxrVb2fWU2QKg"}"#)
        #expect(dot == TokenResponse(accessToken: "Ad9mYSNzYB8jL7mVFCJHWA0cCawhRa", tokenType: "Bearer", expiresIn: .seconds(36000),
                                     refreshToken: "bKtOnFWGzCtf4eyNKFxrVb2fWU2QKg", scope: "read write"))
    }

    /// Azure AD v1 sends its numbers as strings.
    @Test func expiresInAsAString() throws {
        let response = try parse(#"{"token_type":"Bearer","expires_in":"3599","ext_expires_in":"3599","access_token":"eyJ0"}"#)
        #expect(response.expiresIn == .seconds(3599))
    }

    @Test func withoutExpiresInTheJWTExpDecides() throws {
        let jwt = Base64URL.encode(Array(#"{"alg":"RS256"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"exp":1700007200}"#.utf8)) + ".sig"
        #expect(try parse(#"{"access_token":"\#(jwt)","token_type":"Bearer"}"#).tokenSet(obtainedAt: now).expiresAt
            == Date(timeIntervalSince1970: 1_700_007_200))
        // expires_in wins over exp.
        #expect(try parse(#"{"access_token":"\#(jwt)","expires_in":60}"#).tokenSet(obtainedAt: now).expiresAt == now.addingTimeInterval(60))
        // Neither: unknown.
        #expect(try parse(#"{"access_token":"opaque"}"#).tokenSet(obtainedAt: now).expiresAt == nil)
    }

    @Test func unusableOptionalFieldsAreIgnored() throws {
        let response = try parse(#"{"access_token":"t","expires_in":"soon","scope":["a","b"],"refresh_token":"","token_type":null}"#)
        #expect(response == TokenResponse(accessToken: "t"))
        #expect(try parse(#"{"access_token":"t","expires_in":0}"#).expiresIn == nil)
        #expect(try parse(#"{"access_token":"t","expires_in":-5}"#).expiresIn == nil)
    }

    @Test func aTokenlessSuccessIsAnInvalidResponseNamingOnlyTheField() {
        #expect(throws: TokenEndpointError.invalidResponse(status: 200, reason: "its JSON has no access_token")) {
            try parse(#"{"token_type":"Bearer","refresh_token":"SECRET-R"}"#)
        }
        #expect(throws: TokenEndpointError.invalidResponse(status: 200, reason: "its JSON has an unusable access_token")) {
            try parse(#"{"access_token":42}"#)
        }
        #expect(throws: TokenEndpointError.invalidResponse(status: 200, reason: "its JSON has an unusable access_token")) {
            try parse(#"{"access_token":""}"#)
        }
    }

    @Test func anHTMLSuccessIsAnInvalidResponseWithoutItsBody() {
        let error = #expect(throws: TokenEndpointError.self) {
            try parse("<html>login page for SECRET-USER</html>", contentType: "text/html; charset=utf-8")
        }
        #expect(error == .invalidResponse(status: 200, reason: "its body is not a JSON object (text/html)"))
        #expect(error?.message.contains("SECRET") == false)
    }
}
