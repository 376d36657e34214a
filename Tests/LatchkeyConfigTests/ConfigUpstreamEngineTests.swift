import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// A route's `upstream.engine`: `latchkey` (the default) or `libcurl`.
struct ConfigUpstreamEngineTests {
    static func route(_ engine: String) -> String {
        "routes:\n  - { name: a, path: /, upstream: { url: 'https://up.example', engine: \(engine) } }\n"
    }

    @Test func latchkeyIsTheDefaultAndLibcurlIsChosenByName() throws {
        let plain = try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes)
        #expect(plain.routes.allSatisfy { !$0.upstream.forcesLibcurl })
        #expect(try ConfigTestSupport.load(Self.route("latchkey")).routes[0].upstream.forcesLibcurl == false)
        #expect(try ConfigTestSupport.load(Self.route("libcurl")).routes[0].upstream.forcesLibcurl == true)
    }

    @Test func anUnknownEngineIsNamed() {
        let problems = ConfigTestSupport.problems(Self.route("curl"))
        #expect(problems.map(\.path) == ["routes[0].upstream.engine"])
        #expect(problems.first?.message == "unknown engine \"curl\"")
    }

    @Test func aTokenEndpointHasNoEngine() {
        let problems = ConfigTestSupport.problems(ConfigTestSupport.minimalRoutes + """

            identities:
              idp:
                grant: client_credentials
                token_url: { url: 'https://idp.example/token', engine: libcurl }
                client_id: c
                client_secret: { value: s }
            """)
        #expect(problems.map(\.path) == ["identities.idp.token_url.engine"])
    }
}
