import LatchkeyTestSupport
import Testing
@testable import Latchkey
import LatchkeyConfig

@Suite struct ConfigCookieJarTests {
    private func route(_ extra: String, inject: String = "{ header: Authorization, value: \"Bearer {access_token}\", identity: bc }") -> String {
        """
        credentials: { api: { value: t } }
        identities:
          bc: { grant: static, token: { value: t } }
        routes:
          - name: web
            upstream: https://app.example
            inject: [\(inject)]
            \(extra)
        """
    }

    @Test func theClientKeepsTheCookiesUnlessTheRouteSaysProxy() throws {
        #expect(try ConfigTestSupport.load(route("")).routes[0].cookieJar == .client)
        #expect(try ConfigTestSupport.load(route("jar: client")).routes[0].cookieJar == .client)
        let config = try ConfigTestSupport.load(route("jar: proxy\n    handoff: { url: /session }"))
        #expect(config.routes[0].cookieJar == .proxy)
        #expect(config.identitiesKeepingCookies == ["bc"])
    }

    @Test(arguments: [
        ("jar: server", "", "routes[0].jar", "unknown jar 'server'"),
        ("jar: proxy", "{ header: Authorization, credential: api }", "routes[0].jar", "injects no identity"),
        ("jar: proxy\n    handoff: { url: /s, before_first_page: true }", "", "routes[0].handoff.before_first_page", "jar: proxy"),
    ])
    func badJarsAreExplained(_ extra: String, _ inject: String, _ path: String, _ message: String) throws {
        let problems = inject.isEmpty ? ConfigTestSupport.problems(route(extra)) : ConfigTestSupport.problems(route(extra, inject: inject))
        let problem = try #require(problems.first)
        #expect(problems.count == 1)
        #expect(problem.path == path)
        #expect(problem.message.contains(message), "\(problem.message)")
    }
}
