import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// What routes make of recipes: `renew_on` body matches, and templates that name a
/// recipe identity's capture.
@Suite("Config recipe routes")
struct ConfigRecipeRouteTests {
    private static let identities = """
        credentials:
          key: { value: k }
        identities:
          tmdb:
            grant: recipe
            steps: [{ name: s, request: { url: "https://a.example/s" }, capture: { session_id: { json: id }, account: { json: a } } }]
          other:
            grant: recipe
            steps: [{ name: s, request: { url: "https://a.example/s" }, capture: { account: { json: a } } }]
          podio: { grant: client_credentials, token_url: https://idp.example/token, client_id: c }
        """

    private func document(_ route: String) -> String {
        Self.identities + "\nroutes:\n  - name: r\n    upstream: https://api.example.com\n" + route
    }

    private func route(_ route: String) throws -> RouteConfig {
        try #require(try ConfigTestSupport.load(document(route)).routes.first)
    }

    private func problems(_ route: String) -> [String] {
        ConfigTestSupport.problems(document(route)).map(\.description)
    }

    @Test func renewOnMixesStatusesAndBodyMatches() throws {
        let renewal = try route("""
                inject: [{ query: session_id, identity: tmdb, value: "{session_id}" }]
                renew_on:
                  - 403
                  - { status: 401, json: { status_code: 3 } }
                  - status: 401
                    json: { "$.error.code": "expired", retry: false }
            """).renewal
        #expect(renewal.statuses == [403])
        #expect(renewal.bodyMatches == [
            RenewalBodyMatch(status: 401, fields: [JSONFieldMatch(path: try JSONPath(parsing: "status_code"), value: .number(3))]),
            RenewalBodyMatch(status: 401, fields: [JSONFieldMatch(path: try JSONPath(parsing: "error.code"), value: .string("expired")),
                                                   JSONFieldMatch(path: try JSONPath(parsing: "retry"), value: .bool(false))]),
        ])
        let onlyBodies = try route("""
                inject: [{ query: session_id, identity: tmdb, value: "{session_id}" }]
                renew_on: [{ status: 401, json: { status_code: 3 } }]
            """).renewal
        #expect(onlyBodies.statuses.isEmpty && onlyBodies.bodyMatches.count == 1)
        #expect(try route("    renew_on: [401, 403]").renewal == RenewalPolicy(statuses: [401, 403]))
    }

    @Test func renewOnProblems() {
        #expect(problems("""
                renew_on:
                  - 401
                  - { status: 401, json: { status_code: 3 } }
                  - { status: 200, json: { ok: false } }
                  - { json: { a: 1 } }
                  - { status: 403 }
                  - { status: 404, json: {} }
                  - { status: 405, json: { "a..": 1 }, when: always }
                  - [401]
                  - 302
            """) == [
            "test.yaml:16:19: routes[0].renew_on[1].status: 401 is listed alone and with a body match (expected either 401, which renews on every 401, or { status: 401, json: … })",
            "test.yaml:17:19: routes[0].renew_on[2].status: not an error status (expected a status from 400 to 599, such as 401)",
            "test.yaml:18:9: routes[0].renew_on[3]: missing key 'status' (expected the status whose body is looked into, such as 401)",
            "test.yaml:19:9: routes[0].renew_on[4]: missing key 'json' (expected the JSON fields the body must hold; a plain 403 otherwise)",
            "test.yaml:20:30: routes[0].renew_on[5].json: no fields (expected the JSON fields the body must hold, such as status_code: 3)",
            "test.yaml:21:39: routes[0].renew_on[6].json.a..: invalid JSON path: an empty name between dots (expected a JSON path such as session_id, data.token or items[0].id, optionally starting with $.)",
            "test.yaml:21:44: routes[0].renew_on[6].when: unknown key 'when' (expected one of status, json)",
            "test.yaml:22:9: routes[0].renew_on[7]: found a list (expected an integer)",
            "test.yaml:23:9: routes[0].renew_on[8]: not an error status (expected a status from 400 to 599, such as 401)",
        ])
    }

    @Test func recipeTemplatesNameCapturesOrTheToken() throws {
        let injections = try route("""
                inject:
                  - { query: api_key, credential: key }
                  - { query: session_id, identity: tmdb, value: "{session_id}" }
                  - { header: X-Account, identity: tmdb, value: "acct {account}" }
                  - { header: Authorization, identity: tmdb, value: "Bearer {access_token}" }
                  - { cookie: sid, identity: tmdb }
            """).injections
        // `account`, the recipe's last capture, is its token: injected as the token.
        #expect(injections.map(\.capture) == [nil, "session_id", nil, nil, nil])
        #expect(injections.map(\.template.description) == ["{token}", "{session_id}", "acct {account}", "Bearer {token}", "{token}"])
    }

    @Test func onlyARecipeIdentityHasCaptures() {
        #expect(problems("""
                inject:
                  - { query: api_key, credential: key, value: "{session_id}" }
                  - { header: Authorization, identity: podio, value: "Bearer {session_id}" }
            """) == [
            "test.yaml:15:51: routes[0].inject[0].value: invalid template: unknown placeholder (expected text with exactly one {token}, e.g. \"Bearer {token}\")",
            "test.yaml:16:58: routes[0].inject[1].value: invalid template: unknown placeholder (expected text with exactly one {token}, e.g. \"Bearer {token}\")",
        ])
        #expect(problems("""
                inject:
                  - { query: session_id, identity: tmdb, value: "{sesion_id}" }
                  - { query: both, identity: tmdb, value: "{session_id}{account}" }
                  - { query: secret, identity: tmdb, value: "{secrets.password}" }
            """) == [
            "test.yaml:15:53: routes[0].inject[0].value: invalid template: unknown placeholder; did you mean {session_id}? (expected text with exactly one {token} or capture of the identity: {session_id}, {account})",
            "test.yaml:16:47: routes[0].inject[1].value: invalid template: more than one placeholder (expected text with exactly one {token} or capture of the identity: {session_id}, {account})",
            "test.yaml:17:49: routes[0].inject[2].value: invalid template: unknown placeholder (expected text with exactly one {token} or capture of the identity: {session_id}, {account})",
        ])
    }

    @Test func selectableIdentitiesMakeTheInjectedCaptures() {
        #expect(problems("""
                inject: [{ query: session_id, identity: tmdb, value: "{session_id}" }, { query: a, identity: tmdb, value: "{account}" }]
                selectable_identities: [other, podio]
            """) == [
            "test.yaml:15:29: routes[0].selectable_identities[0]: other makes no capture 'session_id', which this route injects (expected a recipe identity that captures session_id, account)",
            "test.yaml:15:36: routes[0].selectable_identities[1]: podio makes no capture 'session_id', which this route injects (expected a recipe identity that captures session_id, account)",
        ])
        #expect(problems("""
                inject: [{ query: a, identity: tmdb, value: "{account}" }]
                selectable_identities: [other]
            """).isEmpty)
    }

    @Test func credentialTemplatesAcceptTheNamesTheyAreGiven() throws {
        let template = try CredentialTemplate(parsing: "sid={session_id};", placeholders: ["token", "session_id"])
        #expect(template.prefix == "sid=" && template.suffix == ";" && template.placeholder == "session_id")
        #expect(template.render(token: "abc") == "sid=abc;")
        #expect(template.description == "sid={session_id};")
        #expect(template != CredentialTemplate(prefix: "sid=", suffix: ";"))
        #expect(try CredentialTemplate(parsing: "{access_token}", placeholders: ["token", "access_token", "x"]).placeholder == "token")
        #expect(throws: CredentialTemplate.ParseError("unknown placeholder; did you mean {session_id}?")) {
            try CredentialTemplate(parsing: "{sesion_id}", placeholders: ["token", "session_id"])
        }
        #expect(throws: CredentialTemplate.ParseError("unknown placeholder")) { try CredentialTemplate(parsing: "{session_id}") }
    }
}
