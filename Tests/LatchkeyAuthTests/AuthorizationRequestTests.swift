import Testing
@testable import LatchkeyAuth

@Suite struct AuthorizationRequestTests {
    private let request = AuthorizationRequest(
        authorizationEndpoint: "https://server.example.com/authorize", clientID: "s6BhdRkqt3",
        redirectURI: "http://127.0.0.1:53682/callback", scope: "openid offline_access", state: "xyz-123",
        codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", extraParameters: [("prompt", "consent")]
    )

    /// RFC 6749 §4.1.1 with RFC 7636 §4.3.
    @Test func authorizationURL() {
        #expect(request.url == "https://server.example.com/authorize?response_type=code&client_id=s6BhdRkqt3"
            + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A53682%2Fcallback&scope=openid+offline_access&state=xyz-123"
            + "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&prompt=consent")
    }

    /// Azure AD B2C names its policy in the endpoint's own query.
    @Test func theEndpointsOwnQueryIsKept() {
        var withQuery = request
        withQuery.authorizationEndpoint = "https://b2c.example/authorize?p=b2c_1_signin"
        withQuery.scope = nil
        withQuery.extraParameters = []
        #expect(withQuery.url.hasPrefix("https://b2c.example/authorize?p=b2c_1_signin&response_type=code&client_id="))
        #expect(!withQuery.url.contains("scope="))
    }

    @Test func codeFromAMatchingRedirect() throws {
        #expect(try request.code(fromRedirect: "/callback?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz-123") == "SplxlOBeZQQYbYS6WxSbIA")
        #expect(try request.code(fromRedirect: "http://127.0.0.1:53682/callback?state=xyz-123&code=a%2Fb+c#frag") == "a/b c")
    }

    @Test func stateMismatchIsRefusedBeforeAnythingElse() {
        for redirect in ["/callback?code=abc&state=xyz-124", "/callback?code=abc&state=xyz-12", "/callback?code=abc",
                         "/callback?error=access_denied&state=other", "/callback"] {
            #expect(throws: AuthorizationError.stateMismatch, "\(redirect)") { try request.code(fromRedirect: redirect) }
        }
        #expect(!AuthorizationError.stateMismatch.message.contains("xyz"))
    }

    /// RFC 6749 §4.1.2.1.
    @Test func refusalAndMissingCode() {
        #expect(throws: AuthorizationError.refused(error: "access_denied", description: "The user said no")) {
            try request.code(fromRedirect: "/callback?error=access_denied&error_description=The+user+said+no&state=xyz-123")
        }
        #expect(throws: AuthorizationError.missingCode) { try request.code(fromRedirect: "/callback?state=xyz-123") }
        #expect(throws: AuthorizationError.missingCode) { try request.code(fromRedirect: "/callback?state=xyz-123&code=") }
        #expect(AuthorizationError.refused(error: "access_denied", description: nil).message
            == "the authorization server refused the login with access_denied")
    }
}
