import LatchkeyConfig

/// The routes sharing one path prefix, indexed by the Host they name, so that choosing
/// among them costs a few hash lookups whatever their number (10,000 routes may all be
/// `path: /` on hosts of their own). A class, built once: reading it for a request
/// retains one reference, where the struct it was retained each of its three tables.
final class RoutesByPrefix: Sendable {
    /// The prefix's length in Characters: the first key of the table's precedence.
    let characterCount: Int
    /// By exact host name; each list in configuration order.
    let exact: [Substring: [Route]]
    /// By `HostPattern.subdomains` suffix (".example.com").
    let subdomains: [Substring: [Route]]
    /// The routes naming no host.
    let anyHost: [Route]

    /// `routes`, in configuration order, all with the same prefix.
    init(characterCount: Int, routes: [Route]) {
        self.characterCount = characterCount
        var exact: [Substring: [Route]] = [:]
        var subdomains: [Substring: [Route]] = [:]
        var anyHost: [Route] = []
        for route in routes {
            switch route.host {
            case .exact(let name): exact[Substring(name), default: []].append(route)
            case .subdomains(let suffix): subdomains[Substring(suffix), default: []].append(route)
            case nil: anyHost.append(route)
            }
        }
        self.exact = exact
        self.subdomains = subdomains
        self.anyHost = anyHost
    }

    /// The route the old linear scan would have taken among these: a route naming the Host
    /// over one whose wildcard covers it over one naming none, then configuration order.
    /// `prefix` is the request path's candidate prefix, its bytes: a list can also hold a prefix only
    /// canonically equal to it (String's hashing), which `Route.pathPrefixBytes` rule out.
    func match(prefix: UnsafeBufferPointer<UInt8>, listener: Int, host: Substring?, requiringHost: Bool) -> (route: Route, rank: Int)? {
        if let host {
            if let route = Self.first(exact[host], prefix: prefix, listener: listener) { return (route, 2) }
            if let route = bestSubdomainRoute(host, prefix: prefix, listener: listener) { return (route, 1) }
        }
        guard !requiringHost, let route = Self.first(anyHost, prefix: prefix, listener: listener) else { return nil }
        return (route, 0)
    }

    /// Every wildcard covering `host` is looked up (one per label of it, the name itself
    /// excluded); the earliest in the configuration wins, as in the scan, not the longest.
    private func bestSubdomainRoute(_ host: Substring, prefix: UnsafeBufferPointer<UInt8>, listener: Int) -> Route? {
        guard !subdomains.isEmpty else { return nil }
        var best: Route?
        for suffix in WildcardSuffixes(host) {
            if let route = Self.first(subdomains[suffix], prefix: prefix, listener: listener), route.index < best?.index ?? .max {
                best = route
            }
        }
        return best
    }

    private static func first(_ routes: [Route]?, prefix: UnsafeBufferPointer<UInt8>, listener: Int) -> Route? {
        routes?.first { route in
            route.serves(listener: listener) && route.pathPrefixBytes.withUnsafeBufferPointer { $0.hasSameBytes(as: prefix) }
        }
    }
}
