import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyUpstream

/// The routes of one configuration, compiled once and shared read-only by every loop.
/// Matching is longest prefix first; among equal prefixes a route naming the request's
/// Host wins over one whose wildcard covers it, which wins over one naming none.
struct RouteTable: Sendable {
    private let routes: [Route]
    /// Every route's secret query parameters: redacted in the log line of a request that
    /// matched no route, whose client may still have sent them.
    let allSecretQueryParameters: Set<String>
    /// Whether any route names a Host: if none does, matching needs no Host at all.
    let anyRouteNamesHost: Bool
    /// The routes that may inject more than one identity, by name: where `latchkey use`
    /// has a choice to make.
    let selectable: [String: RouteIdentities]
    /// The metrics index of the requests a forward listener passes to its `tunnel:` hosts,
    /// after the configured routes'; nil when no listener has any.
    let passthroughIndex: Int?

    /// The name those requests carry in the access log and the metrics: not a route name
    /// the configuration can give (RouteConfig names take no parentheses).
    static let passthroughName = "(tunnel)"

    /// `identities`: the running identities by name, which routes inject.
    init(config: Config, identities: [String: Identity] = [:]) {
        let listenerIndex = Dictionary(uniqueKeysWithValues: config.listeners.enumerated().map { ($1.name, $0) })
        routes = config.routes.enumerated().compactMap { Route($1, index: $0, listenerIndex: listenerIndex, identities: identities) }.sorted { a, b in
            if a.pathPrefix.count != b.pathPrefix.count { return a.pathPrefix.count > b.pathPrefix.count }
            return Self.hostRank(a.host) > Self.hostRank(b.host)
        }
        allSecretQueryParameters = routes.reduce(into: []) { $0.formUnion($1.secretQueryParameters) }
        anyRouteNamesHost = routes.contains { $0.host != nil }
        selectable = Dictionary(uniqueKeysWithValues: routes.compactMap { route in
            route.identities.flatMap { $0.allowed.count > 1 ? (route.name, $0) : nil }
        })
        passthroughIndex = config.hasTunnelHosts ? config.routes.count : nil
    }

    /// A route for one plain request to a `tunnel:` host: to the host the client named, its
    /// Host kept, nothing injected or added, no cookie rewritten (a forward proxy's request
    /// on the client's behalf), and the destination guard on. Made per request: such requests are
    /// few, and their upstream is the client's to name.
    func passthrough(scheme: ProxyTarget.Scheme, to authority: TargetAuthority) -> Route? {
        guard let passthroughIndex else { return nil }
        var options = UpstreamOptions()
        options.refusesLocalDestinations = true
        let config = RouteConfig(name: Self.passthroughName, upstream: UpstreamConfig(url: "\(scheme.rawValue)://\(authority)", options: options),
                                 preserveHost: true, cookies: CookieRewrite(domain: .keep, mapPath: false))
        return Route(config, index: passthroughIndex, listenerIndex: [:], identities: [:], marksForwarding: false)
    }

    private static func hostRank(_ host: HostPattern?) -> Int {
        switch host {
        case .exact: 2
        case .subdomains: 1
        case nil: 0
        }
    }

    func route(named name: String) -> Route? {
        routes.first { $0.name == name }
    }

    /// `host` is the request's Host without port, lower-cased. `requiringHost`: only routes
    /// that name hosts match (a forward proxy's requests, routed by their destination).
    func match(listener: Int, path: Substring, host: Substring?, requiringHost: Bool = false) -> Route? {
        routes.first { route in
            (route.listeners.isEmpty || route.listeners.contains(listener))
                && (route.host.map { pattern in host.map(pattern.matches) ?? false } ?? !requiringHost)
                && route.matches(path: path)
        }
    }

    /// Whether a route on `listener` names `host` (lower-cased, without port), whatever
    /// its path: a CONNECT to it is intercepted.
    func namesHost(_ host: String, listener: Int) -> Bool {
        routes.contains { route in
            (route.listeners.isEmpty || route.listeners.contains(listener)) && route.host?.matches(host) == true
        }
    }
}
