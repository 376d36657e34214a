import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// `selectable_identities` on routes and `revocation_url` on identities.
@Suite("Config route identities")
struct ConfigRouteIdentitiesTests {
    private let identities = """
        identities:
          alice: { grant: static, token: { value: a } }
          bob: { grant: static, token: { value: b } }
          carol: { grant: client_credentials, token_url: https://idp.example/token, client_id: c, client_secret: { value: s } }
        credentials:
          key: { value: k }
        """

    private func route(_ extra: String, inject: String = "{ header: Authorization, value: \"Bearer {access_token}\", identity: alice }") -> String {
        identities + """

            routes:
              - name: api
                upstream: https://api.example.com
                inject: [\(inject)]
            \(extra)
            """
    }

    @Test func theConfiguredIdentityComesFirstAmongTheAllowedOnes() throws {
        let config = try ConfigTestSupport.load(route("    selectable_identities: [bob, alice, carol]"))
        #expect(config.routes[0].selectableIdentities == ["bob", "alice", "carol"])
        #expect(config.routes[0].identity == "alice")
        #expect(config.routes[0].allowedIdentities == ["alice", "bob", "carol"])
    }

    @Test func withoutTheKeyOnlyTheInjectedIdentityIsAllowed() throws {
        let config = try ConfigTestSupport.load(route(""))
        #expect(config.routes[0].selectableIdentities.isEmpty)
        #expect(config.routes[0].allowedIdentities == ["alice"])
    }

    @Test func unknownAndRepeatedNamesAreLocated() {
        let problems = ConfigTestSupport.problems(route("    selectable_identities: [bob, bobb, bob]"))
        #expect(problems.map(\.description) == [
            "test.yaml:11:34: routes[0].selectable_identities[1]: unknown identity 'bobb'; did you mean 'bob'? (expected one of alice, bob, carol)",
            "test.yaml:11:40: routes[0].selectable_identities[2]: bob is listed twice (also [0]) (expected each identity once)",
        ])
    }

    @Test func anEmptyListIsAMistake() {
        let problems = ConfigTestSupport.problems(route("    selectable_identities: []"))
        #expect(problems.map(\.path) == ["routes[0].selectable_identities"])
        #expect(problems.first?.message == "empty list")
    }

    @Test func aRouteWithoutAnIdentityHasNoneToSelect() {
        let problems = ConfigTestSupport.problems(route("    selectable_identities: [bob]", inject: "{ header: X-Key, credential: key }"))
        #expect(problems.map(\.description) == [
            "test.yaml:11:28: routes[0].selectable_identities: the route injects no identity "
                + "(expected an inject entry with identity:, whose token the selectable identities replace)",
        ])
    }

    @Test func aMisspelledInjectedIdentityIsReportedOnce() {
        let problems = ConfigTestSupport.problems(route("    selectable_identities: [bob]", inject: "{ header: Authorization, identity: alicia }"))
        #expect(problems.map(\.path) == ["routes[0].inject[0].identity"])
    }

    @Test func revocationURLIsReadAndChecked() throws {
        let config = try ConfigTestSupport.load("""
            identities:
              web:
                grant: password
                username: u
                password: { value: p }
                token_url: https://idp.example/oauth/token
                revocation_url: https://idp.example/oauth/revoke
                client_id: c
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        #expect(config.identities[0].revocationURL == "https://idp.example/oauth/revoke")

        let problems = ConfigTestSupport.problems("""
            identities:
              web: { grant: client_credentials, token_url: https://idp.example/token, client_id: c, revocation_url: "ftp://idp.example/revoke" }
              kii: { grant: static, token: { value: t }, revocation_url: https://idp.example/revoke }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        #expect(problems.map(\.path) == ["identities.web.revocation_url", "identities.kii.revocation_url"])
        #expect(problems.last?.message == "a static token has no token endpoint")
    }
}
