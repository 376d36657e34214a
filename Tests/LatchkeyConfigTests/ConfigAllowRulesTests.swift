import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// `routes[].allow`: the requests a route forwards.
@Suite("Config allow rules")
struct ConfigAllowRulesTests {
    private func route(_ allow: String) -> String {
        """
        routes:
          - name: github
            upstream: https://api.github.com
            allow: \(allow)
        """
    }

    @Test func rulesKeepTheirPathAndUpperCaseTheirMethod() throws {
        let config = try ConfigTestSupport.load(route("[{ method: get, path: /repos/** }, { path: \"/user/*/keys\" }, { method: PATCH, path: / }]"))
        #expect(config.routes[0].allow == [
            AllowRule(method: "GET", path: "/repos/**"), AllowRule(method: nil, path: "/user/*/keys"), AllowRule(method: "PATCH", path: "/"),
        ])
    }

    @Test func routesAllowEverythingByDefault() throws {
        #expect(try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes).routes[0].allow.isEmpty)
    }

    @Test(arguments: [
        ("[]", "routes[0].allow", "empty list"),
        ("{ path: / }", "routes[0].allow", "expected a list"),
        ("[/repos]", "routes[0].allow[0]", "expected a mapping"),
        ("[{ method: GET }]", "routes[0].allow[0]", "missing key 'path'"),
        ("[{ path: repos/** }]", "routes[0].allow[0].path", "must start with '/'"),
        ("[{ path: \"/repos?x=1\" }]", "routes[0].allow[0].path", "'?' or '#'"),
        ("[{ path: \"/repos#x\" }]", "routes[0].allow[0].path", "'?' or '#'"),
        ("[{ path: \"/a b\" }]", "routes[0].allow[0].path", "a space"),
        ("[{ path: \"/repos/**.json\" }]", "routes[0].allow[0].path", "'**' must be a whole segment"),
        ("[{ path: \"/***\" }]", "routes[0].allow[0].path", "'**' must be a whole segment"),
        ("[{ method: \"*\", path: / }]", "routes[0].allow[0].method", "'*' is not a method"),
        ("[{ method: \"GE T\", path: / }]", "routes[0].allow[0].method", "invalid method"),
        ("[{ method: GET, path: /, methods: [POST] }]", "routes[0].allow[0].methods", "unknown key 'methods'; did you mean 'method'?"),
    ])
    func ruleProblems(_ allow: String, _ path: String, _ message: String) throws {
        let found = ConfigTestSupport.problems(route(allow))
        let problem = try #require(found.first)
        #expect(found.count == 1, "\(found)")
        #expect(problem.path == path)
        #expect(problem.description.contains(message), "\(problem.description)")
        #expect(problem.line == 4)
    }
}
