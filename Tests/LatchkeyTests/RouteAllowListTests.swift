import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct RouteAllowListTests {
    private let list = RouteAllowList([
        AllowRule(method: "GET", path: "/repos/**"),
        AllowRule(method: "POST", path: "/repos/*/*/issues"),
        AllowRule(method: nil, path: "/rate_limit"),
    ])

    @Test func anEmptyListPermitsEverything() {
        #expect(RouteAllowList([]).permits(method: "DELETE", path: "/anything"))
    }

    @Test(arguments: [
        ("GET", "/repos/o/r/contents/x", true), ("GET", "/repos", true), ("HEAD", "/repos/o/r", true),
        ("DELETE", "/repos/o/r", false), ("get", "/repos/o/r", false),
        ("POST", "/repos/o/r/issues", true), ("POST", "/repos/o/r/pulls", false), ("POST", "/repos/o/issues", false),
        ("HEAD", "/rate_limit", true), ("HEAD", "/user", false),
        ("PUT", "/rate_limit", true), ("GET", "/rate_limit/x", false),
        ("GET", "/user", false),
    ])
    func permits(_ method: String, _ path: String, _ expected: Bool) {
        #expect(list.permits(method: method, path: Substring(path)) == expected, "\(method) \(path)")
    }

    /// The router hands over the path part of the target, a Substring.
    @Test func aPathCutFromATarget() {
        let target = "/repos/o/r?ref=main"
        let path = target[..<target.firstIndex(of: "?")!]
        #expect(list.permits(method: "GET", path: path))
        #expect(!list.permits(method: "GET", path: target.dropFirst()))
    }

    @Test func theRouteCompilesItsList() throws {
        let config = RouteConfig(name: "github", upstream: UpstreamConfig(url: "https://api.github.com"),
                                 allow: [AllowRule(method: "GET", path: "/repos/**")])
        let route = try #require(Route(config, index: 0, listenerIndex: [:], identities: [:]))
        #expect(route.allow.permits(method: "GET", path: "/repos/o/r"))
        #expect(!route.allow.permits(method: "GET", path: "/user"))
    }
}
