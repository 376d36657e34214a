import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// The grants of `latchkey login`: authorization_code and device_code.
@Suite("Config login grants")
struct ConfigLoginGrantTests {
    private func load(_ identities: String) throws -> [String: IdentityConfig] {
        try ConfigTestSupport.identities(identities, injected: "web")
    }

    private func problems(_ identities: String) -> [ConfigProblem] {
        ConfigTestSupport.identityProblems(identities, injected: "web")
    }

    @Test func authorizationCodeWithItsEndpointsAndDefaults() throws {
        let identities = try load("""
              web:
                grant: authorization_code
                authorization_url: https://idp.example/authorize?p=b2c_1_signin
                token_url: https://idp.example/token
                client_id: cli
                scope: openid offline_access
              fixed:
                grant: authorization_code
                issuer: https://idp.example
                client_id: cli
                redirect_port: 8765
                redirect_path: /oauth/done
            """)
        let web = try #require(identities["web"])
        #expect(web.grant == .authorizationCode(.init(authorizationURL: "https://idp.example/authorize?p=b2c_1_signin")))
        #expect(web.grant == .authorizationCode(.init(authorizationURL: "https://idp.example/authorize?p=b2c_1_signin",
                                                      redirectPort: 0, redirectPath: "/callback")))
        #expect(web.clientAuth == .none && web.scope == "openid offline_access" && web.logsInInteractively)
        #expect(web.secretEntries.isEmpty)
        let fixed = try #require(identities["fixed"])
        #expect(fixed.grant == .authorizationCode(.init(authorizationURL: nil, redirectPort: 8765, redirectPath: "/oauth/done")))
        #expect(fixed.issuer == "https://idp.example" && fixed.tokenURL == nil)
    }

    /// A confidential client logs in too: its secret is held like any other.
    @Test func deviceCodeWithItsEndpointOrDiscovery() throws {
        let identities = try load("""
              web:
                grant: device_code
                device_authorization_url: https://idp.example/device
                token_url: https://idp.example/token
                client_id: tv
                client_secret: { env: TV_SECRET }
              discovered: { grant: device_code, issuer: https://idp.example, client_id: tv }
            """)
        #expect(identities["web"]?.grant == .deviceCode(deviceAuthorizationURL: "https://idp.example/device"))
        #expect(identities["web"]?.clientAuth == .clientSecretBasic)
        #expect(identities["web"]?.secretEntries.map(\.name) == ["identity:web:client_secret"])
        #expect(identities["discovered"]?.grant == .deviceCode(deviceAuthorizationURL: nil))
        #expect(identities["discovered"]?.logsInInteractively == true)
    }

    @Test func missingEndpointsAndClient() {
        let found = problems("""
              web: { grant: authorization_code, token_url: https://idp.example/token }
              tv: { grant: device_code, token_url: https://idp.example/token }
            """)
        #expect(found.map(\.description) == [
            "test.yaml:2:8: identities.web: missing key 'authorization_url' or 'issuer' (expected the IdP's authorization endpoint URL, or its issuer URL for discovery)",
            "test.yaml:2:8: identities.web: missing key 'client_id' (expected the client's id at the IdP)",
            "test.yaml:3:7: identities.tv: missing key 'device_authorization_url' or 'issuer' (expected the IdP's device authorization endpoint URL, or its issuer URL for discovery)",
            "test.yaml:3:7: identities.tv: missing key 'client_id' (expected the client's id at the IdP)",
        ])
    }

    @Test func badRedirectAndEndpointValues() {
        let found = problems("""
              web:
                grant: authorization_code
                authorization_url: ftp://idp.example/authorize
                token_url: https://idp.example/token
                client_id: cli
                redirect_port: 70000
                redirect_path: callback?x=1
              low: { grant: authorization_code, issuer: https://idp.example, client_id: cli, redirect_port: -1 }
              tv:
                grant: device_code
                device_authorization_url: https://idp.example/device?tenant=1
                token_url: https://idp.example/token
                client_id: tv
            """)
        #expect(found.map { "\($0.path): \($0.message)" } == [
            "identities.web.authorization_url: unsupported URL scheme",
            "identities.web.redirect_port: out of range",
            "identities.web.redirect_path: not an absolute path without query",
            "identities.low.redirect_port: out of range",
            "identities.tv.device_authorization_url: URL must not contain a query; use inject with query: for parameters",
        ])
        #expect(found[1].expected == "a port from 1 to 65535, or 0 for any free port")
        #expect(found[2].expected == "a path such as /callback")
    }

    /// The keys of one grant are mistakes on another.
    @Test func loginKeysBelongToTheirGrant() {
        let found = problems("""
              pw:
                grant: password
                username: alice
                password: { value: pw }
                token_url: https://idp.example/token
                redirect_port: 8765
              web:
                grant: authorization_code
                issuer: https://idp.example
                client_id: cli
                device_authorization_url: https://idp.example/device
              tv: { grant: device_code, issuer: https://idp.example, client_id: tv, authorization_url: https://idp.example/a }
            """)
        #expect(found.map { "\($0.path): \($0.message)" } == [
            "identities.pw.redirect_port: not used by the password grant",
            "identities.web.device_authorization_url: not used by the authorization_code grant",
            "identities.tv.authorization_url: not used by the device_code grant",
        ])
    }

    @Test func unknownGrantListsTheLoginGrants() {
        let found = problems("  web: { grant: browser, token_url: https://idp.example/token }")
        #expect(found.first?.expected?.hasSuffix("jwt_bearer, token_exchange, authorization_code, device_code, recipe") == true)
    }
}
