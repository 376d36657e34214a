import LatchkeyConfig
import LatchkeyTestSupport
import Testing
@testable import Latchkey

/// The table against the linear scan it replaced, on randomized route sets and requests:
/// routes sorted by prefix length in Characters, then host rank (exact name, wildcard,
/// none), then configuration order; the first whose listeners, Host and segment-bounded
/// prefix admit the request wins.
extension RouteTableTests {
    @Test(arguments: 0..<40 as Range<UInt64>)
    func agreesWithALinearScan(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let routes = (0..<Int.random(in: 1...40, using: &random)).map { index in
            RouteConfig(name: "r\(index)", listeners: Self.listenerChoices.randomElement(using: &random)!,
                        pathPrefix: Self.prefixes.randomElement(using: &random)!, host: Self.routeHosts.randomElement(using: &random)!,
                        upstream: UpstreamConfig(url: "http://up.example"))
        }
        let config = config(routes)
        let table = RouteTable(config: config)
        let reference = ReferenceScan(config: config)
        for _ in 0..<300 {
            let path = Substring(Self.paths.randomElement(using: &random)!)
            let host = Self.requestHosts.randomElement(using: &random)!.map { Substring($0) }
            let listener = Int.random(in: 0...2, using: &random)
            let requiringHost = Bool.random(using: &random)
            #expect(table.match(listener: listener, path: path, host: host, requiringHost: requiringHost)?.name
                        == reference.match(listener: listener, path: path, host: host, requiringHost: requiringHost),
                    "seed \(seed): \(path) host \(host ?? "none") listener \(listener) requiringHost \(requiringHost)")
            if let host {
                #expect(table.namesHost(String(host), listener: listener) == reference.namesHost(String(host), listener: listener),
                        "seed \(seed): namesHost \(host) listener \(listener)")
            }
        }
    }

    private static let prefixes = ["/", "/a", "/a/", "/a/b", "/ab", "/a/b/c", "/b", "/b/a", "/a/bc", "", "/é", "/e\u{301}"]
    private static let paths = ["/", "/a", "/a/", "/a/b", "/a/b/", "/ab", "/abc", "/a/b/c", "/a/b/cd", "/a/bc/d", "/b", "/b/a/x",
                                "/c", "", "/é/x", "/e\u{301}", "/a//b", "/ab/c"]
    private static let routeHosts: [String?] = [nil, nil, "a.example.com", "example.com", "x.a.example.com", "*.example.com",
                                                "*.a.example.com", "*.com"]
    private static let requestHosts: [String?] = [nil, "a.example.com", "example.com", "x.a.example.com", "y.x.a.example.com",
                                                  "b.example.com", "other.org", "com"]
    private static let listenerChoices: [[String]] = [[], [], ["main"], ["other"], ["main", "other"]]
}

/// The matching RouteTable did before it indexed its routes, kept as the tests' reference.
private struct ReferenceScan {
    private let routes: [(name: String, listeners: Set<Int>, prefix: String, host: HostPattern?)]

    init(config: Config) {
        let listenerIndex = Dictionary(uniqueKeysWithValues: config.listeners.enumerated().map { ($1.name, $0) })
        let routes = config.routes.map { route in
            (name: route.name, listeners: Set(route.listeners.compactMap { listenerIndex[$0] }), prefix: route.pathPrefix,
             host: route.host.map { HostPattern($0.lowercased()) })
        }
        // A stable sort: equal keys keep the configuration's order.
        self.routes = routes.enumerated().sorted { a, b in
            if a.element.prefix.count != b.element.prefix.count { return a.element.prefix.count > b.element.prefix.count }
            if Self.rank(a.element.host) != Self.rank(b.element.host) { return Self.rank(a.element.host) > Self.rank(b.element.host) }
            return a.offset < b.offset
        }.map(\.element)
    }

    private static func rank(_ host: HostPattern?) -> Int {
        switch host {
        case .exact: 2
        case .subdomains: 1
        case nil: 0
        }
    }

    func match(listener: Int, path: Substring, host: Substring?, requiringHost: Bool) -> String? {
        routes.first { route in
            (route.listeners.isEmpty || route.listeners.contains(listener))
                && (route.host.map { pattern in host.map(pattern.matches) ?? false } ?? !requiringHost)
                && Self.matches(path: path, prefix: route.prefix)
        }?.name
    }

    func namesHost(_ host: String, listener: Int) -> Bool {
        routes.contains { route in
            (route.listeners.isEmpty || route.listeners.contains(listener)) && route.host?.matches(host) == true
        }
    }

    private static func matches(path: Substring, prefix: String) -> Bool {
        let path = path.utf8, prefix = prefix.utf8
        guard path.starts(with: prefix) else { return false }
        if prefix.last == UInt8(ascii: "/") || path.count == prefix.count { return true }
        return path[path.index(path.startIndex, offsetBy: prefix.count)] == UInt8(ascii: "/")
    }
}
