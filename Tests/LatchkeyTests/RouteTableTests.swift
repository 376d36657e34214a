import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct RouteTableTests {
    private func config(_ routes: [RouteConfig]) -> Config {
        Config(listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080)),
                           ListenerConfig(name: "other", address: .tcp(host: "127.0.0.1", port: 8081))],
               routes: routes)
    }

    private func route(_ name: String, _ prefix: String, host: String? = nil, listeners: [String] = [],
                       upstream: String = "http://up.example/base", replacement: String? = "") -> RouteConfig {
        RouteConfig(name: name, listeners: listeners, pathPrefix: prefix, host: host,
                    upstream: UpstreamConfig(url: upstream), prefixReplacement: replacement)
    }

    @Test func longestPrefixWins() {
        let table = RouteTable(config: config([route("root", "/"), route("api", "/api"), route("v2", "/api/v2")]))
        #expect(table.match(listener: 0, path: "/api/v2/x", host: nil)?.name == "v2")
        #expect(table.match(listener: 0, path: "/api/v3", host: nil)?.name == "api")
        #expect(table.match(listener: 0, path: "/apix", host: nil)?.name == "root")
        #expect(table.match(listener: 0, path: "/api", host: nil)?.name == "api")
    }

    @Test func hostAndListenerNarrowTheMatch() {
        let table = RouteTable(config: config([
            route("any", "/"), route("hosted", "/", host: "API.local"), route("second", "/s", listeners: ["other"]),
        ]))
        #expect(table.match(listener: 0, path: "/x", host: "api.local")?.name == "hosted")
        #expect(table.match(listener: 0, path: "/x", host: "other.local")?.name == "any")
        #expect(table.match(listener: 0, path: "/s", host: nil)?.name == "any")
        #expect(table.match(listener: 1, path: "/s", host: nil)?.name == "second")
    }

    /// `*.example.com` covers every name under the domain (not the domain itself); among
    /// equal prefixes the exact name wins over the wildcard, which wins over no host.
    @Test func aWildcardHostCoversSubdomainsBelowAnExactOne() {
        let table = RouteTable(config: config([
            route("any", "/"), route("wild", "/", host: "*.example.com"), route("exact", "/", host: "api.example.com"),
        ]))
        #expect(table.match(listener: 0, path: "/x", host: "api.example.com")?.name == "exact")
        #expect(table.match(listener: 0, path: "/x", host: "uploads.example.com")?.name == "wild")
        #expect(table.match(listener: 0, path: "/x", host: "a.b.example.com")?.name == "wild")
        #expect(table.match(listener: 0, path: "/x", host: "example.com")?.name == "any")
        #expect(table.match(listener: 0, path: "/x", host: "badexample.com")?.name == "any")
        #expect(table.match(listener: 0, path: "/x", host: nil)?.name == "any")
    }

    @Test func noRouteIsNil() {
        let table = RouteTable(config: config([route("api", "/api")]))
        #expect(table.match(listener: 0, path: "/other", host: nil) == nil)
    }

    @Test(arguments: [
        ("/api", "", "/api/users", "/base/users"),
        ("/api", "", "/api", "/base"),
        ("/api/", "", "/api/users", "/base/users"),
        ("/api", "/v3", "/api/users", "/base/v3/users"),
        ("/api", nil, "/api/users", "/base/api/users"),
        ("/", "", "/x/y", "/base/x/y"),
    ] as [(String, String?, String, String)])
    func upstreamPathMapping(prefix: String, replacement: String?, path: String, expected: String) {
        let table = RouteTable(config: config([route("r", prefix, replacement: replacement)]))
        let route = table.match(listener: 0, path: Substring(path), host: nil)
        #expect(route?.upstreamPath(for: Substring(path)) == expected)
    }

    @Test func upstreamWithoutBasePath() {
        let table = RouteTable(config: config([route("r", "/api", upstream: "https://up.example:8443")]))
        let route = table.match(listener: 0, path: "/api/x", host: nil)
        #expect(route?.upstreamPath(for: "/api/x") == "/x")
        #expect(route?.upstreamPath(for: "/api") == "/")
        #expect(route?.upstream.origin == "https://up.example:8443")
    }
}
