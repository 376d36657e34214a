import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct RouteTableTests {
    func config(_ routes: [RouteConfig]) -> Config {
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

    /// Among wildcards covering the Host at one prefix, the configuration's order decides,
    /// not the longer suffix; a longer prefix still beats any host rank.
    @Test func amongWildcardsTheEarlierWinsAndALongerPrefixBeatsAnyHost() {
        let table = RouteTable(config: config([
            route("wide", "/", host: "*.example.com"), route("narrow", "/", host: "*.a.example.com"),
            route("exact", "/", host: "x.a.example.com"), route("deeper", "/v1"),
        ]))
        #expect(table.match(listener: 0, path: "/x", host: "y.a.example.com")?.name == "wide")
        #expect(table.match(listener: 0, path: "/x", host: "x.a.example.com")?.name == "exact")
        #expect(table.match(listener: 0, path: "/v1/x", host: "x.a.example.com")?.name == "deeper")
    }

    /// A forward proxy's request matches only routes naming hosts; a route of another
    /// listener is passed over for the next one in precedence.
    @Test func requiringHostAndListenersSkipToTheNextRoute() {
        let table = RouteTable(config: config([
            route("any", "/api"), route("hosted", "/", host: "api.example.com"),
            route("other", "/api", host: "api.example.com", listeners: ["other"]),
        ]))
        #expect(table.match(listener: 0, path: "/api/x", host: "api.example.com")?.name == "any")
        #expect(table.match(listener: 0, path: "/api/x", host: "api.example.com", requiringHost: true)?.name == "hosted")
        #expect(table.match(listener: 1, path: "/api/x", host: "api.example.com", requiringHost: true)?.name == "other")
        #expect(table.match(listener: 0, path: "/api/x", host: nil, requiringHost: true) == nil)
    }

    /// A prefix ending in '/' matches below it only; others match on segment boundaries.
    @Test func prefixesMatchOnSegmentBoundaries() {
        let table = RouteTable(config: config([route("slash", "/a/"), route("plain", "/ab")]))
        #expect(table.match(listener: 0, path: "/a/x", host: nil)?.name == "slash")
        #expect(table.match(listener: 0, path: "/a", host: nil) == nil)
        #expect(table.match(listener: 0, path: "/ab/c", host: nil)?.name == "plain")
        #expect(table.match(listener: 0, path: "/abc", host: nil) == nil)
    }

    @Test func namesHostHonoursListenersAndWildcards() {
        let table = RouteTable(config: config([
            route("exact", "/e", host: "api.example.com", listeners: ["other"]), route("wild", "/w", host: "*.corp.example"),
        ]))
        #expect(table.namesHost("api.example.com", listener: 1))
        #expect(!table.namesHost("api.example.com", listener: 0))
        #expect(table.namesHost("a.b.corp.example", listener: 0))
        #expect(!table.namesHost("corp.example", listener: 0))
        #expect(table.route(named: "wild")?.pathPrefix == "/w")
        #expect(table.route(named: "none") == nil)
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

    @Test func aPathKeptWholeOrCutByTheBytesOfItsPrefix() {
        let table = RouteTable(config: config([route("kept", "/api", upstream: "http://up", replacement: nil),
                                               route("cut", "/café", upstream: "http://up")]))
        #expect(table.match(listener: 0, path: "/api/x", host: nil)?.upstreamPath(for: "/api/x") == "/api/x")
        #expect(table.match(listener: 0, path: "/café/x", host: nil)?.upstreamPath(for: "/café/x") == "/x")
        #expect(table.match(listener: 0, path: "/café", host: nil)?.upstreamPath(for: "/café") == "/")
        let cut = RouteTable(config: config([route("root", "/", upstream: "http://up"), route("api", "/api/", upstream: "http://up")]))
        for (path, expected) in [("/x/y", "/x/y"), ("/", "/"), ("/api/x", "/x"), ("/api/", "/"), ("/apix", "/apix")] {
            #expect(cut.match(listener: 0, path: Substring(path), host: nil)?.upstreamPath(for: Substring(path)) == expected, "\(path)")
        }
    }
}
