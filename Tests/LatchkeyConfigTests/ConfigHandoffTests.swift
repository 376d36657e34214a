import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

@Suite struct ConfigHandoffTests {
    private func route(_ handoff: String, inject: Bool = true, upstream: String = "https://3.basecamp.example/4242") -> String {
        """
        credentials: { api: { value: t } }
        routes:
          - name: web
            upstream: \(upstream)
        \(inject ? "    inject: [{ header: Authorization, value: \"Bearer {token}\", credential: api }]" : "")
            handoff: \(handoff)
        """
    }

    @Test func aPathIsResolvedAgainstTheUpstreamAndDefaultsApply() throws {
        let config = try ConfigTestSupport.load(route("{ url: /session/from_token }"))
        #expect(config.routes[0].handoff == HandoffConfig(url: "https://3.basecamp.example/4242/session/from_token"))
        let handoff = try #require(config.routes[0].handoff)
        #expect(handoff.method == "POST" && !handoff.beforeFirstPage)
        #expect(handoff.expects(status: 200) && handoff.expects(status: 204) && !handoff.expects(status: 302))
    }

    @Test func everyKeyIsRead() throws {
        let config = try ConfigTestSupport.load(route(
            "{ url: \"https://launchpad.example/handoff?app=1\", method: GET, expect_status: [204, 302], before_first_page: true }"))
        #expect(config.routes[0].handoff == HandoffConfig(url: "https://launchpad.example/handoff?app=1", method: "GET",
                                                          expectedStatuses: [204, 302], beforeFirstPage: true))
        #expect(config.routes[0].handoff?.expects(status: 200) == false)
    }

    @Test func aRouteWithoutCredentialsCannotHandOff() {
        let problems = ConfigTestSupport.problems(route("{ url: /s }", inject: false))
        #expect(problems.map(\.path) == ["routes[0].handoff"])
        #expect(problems.first?.message.contains("injects no credential") == true)
    }

    @Test(arguments: [
        ("{ method: POST }", "routes[0].handoff", "missing key 'url'"),
        ("{ url: //other.example/s }", "routes[0].handoff.url", "not a path"),
        ("{ url: \"ftp://x.example/s\" }", "routes[0].handoff.url", "unsupported URL scheme"),
        ("{ url: /s, method: post }", "routes[0].handoff.method", "invalid method"),
        ("{ url: /s, expect_status: [401] }", "routes[0].handoff.expect_status[0]", "not a success or redirect status"),
        ("{ url: /s, body: x }", "routes[0].handoff.body", "unknown key"),
    ])
    func badHandoffsAreExplained(_ handoff: String, _ path: String, _ message: String) throws {
        let problems = ConfigTestSupport.problems(route(handoff))
        let problem = try #require(problems.first)
        #expect(problems.count == 1)
        #expect(problem.path == path)
        #expect(problem.message.contains(message), "\(problem.message)")
    }
}
