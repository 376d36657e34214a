import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// `check_on_start`: a restored token checked at the IdP before its first use (Auth0).
@Suite("Config start-up check")
struct ConfigStartupCheckTests {
    private func load(_ identities: String) throws -> [String: IdentityConfig] {
        try ConfigTestSupport.identities(identities, injected: "user")
    }

    private func problems(_ identities: String) -> [String] {
        ConfigTestSupport.identityProblems(identities, injected: "user").map(\.description)
    }

    @Test func userinfoOrIntrospectionGivenOrDiscovered() throws {
        let identities = try load("""
              user:
                grant: client_credentials
                token_url: https://tenant.auth0.example/oauth/token
                client_id: cli
                client_secret: { env: SECRET }
                check_on_start: userinfo
                userinfo_url: https://tenant.auth0.example/userinfo
              rs:
                grant: client_credentials
                issuer: https://idp.example
                client_id: cli
                client_secret: { env: SECRET }
                check_on_start: introspection
              plain: { grant: client_credentials, token_url: https://idp.example/token, client_id: cli }
            """)
        #expect(identities["user"]?.startupCheck == .userinfo(url: "https://tenant.auth0.example/userinfo"))
        #expect(identities["rs"]?.startupCheck == .introspection(url: nil))
        #expect(identities["plain"]?.startupCheck == nil)
    }

    @Test func aCheckNeedsItsEndpointAndEndpointsNeedTheirCheck() {
        #expect(problems("""
              user:
                grant: client_credentials
                token_url: https://idp.example/token
                client_id: cli
                check_on_start: userinfo
                introspection_url: https://idp.example/introspect
              odd: { grant: client_credentials, token_url: https://idp.example/token, client_id: cli, check_on_start: jwks }
              loose: { grant: client_credentials, token_url: https://idp.example/token, client_id: cli, userinfo_url: "ftp://x" }
              kii: { grant: static, token: { env: KII_TOKEN }, check_on_start: userinfo }
            """) == [
            "test.yaml:3:5: identities.user: missing key 'userinfo_url' or 'issuer' (expected the endpoint that checks a restored token, or the issuer URL for discovery)",
            "test.yaml:7:24: identities.user.introspection_url: not used by check_on_start: userinfo (expected userinfo_url)",
            "test.yaml:8:107: identities.odd.check_on_start: unknown check 'jwks' (expected userinfo (OIDC, asked with the token itself) or introspection (RFC 7662, asked with the client's credentials))",
            "test.yaml:9:107: identities.loose.userinfo_url: unsupported URL scheme (expected an http or https URL such as https://api.example.com/v1)",
            "test.yaml:9:107: identities.loose.userinfo_url: not used without check_on_start (expected check_on_start: userinfo or introspection)",
            "test.yaml:10:68: identities.kii.check_on_start: a static token has no token endpoint (expected only token (and acquire))",
        ])
    }
}
