import LatchkeyConfig

/// The listeners on which some route names each host (by name or by wildcard), whatever
/// its path: what a forward listener asks of each CONNECT, at the cost of a hash lookup
/// per label of the host rather than a look at every route.
struct HostListeners: Sendable {
    /// The listeners of the routes naming a host: all of them when one of those routes
    /// leaves its listeners unsaid.
    enum Listeners: Sendable {
        case all
        case some(Set<Int>)

        mutating func add(_ route: Route) {
            guard case .some(let listeners) = self, !route.listeners.isEmpty else {
                self = .all
                return
            }
            self = .some(listeners.union(route.listeners))
        }

        func contains(_ listener: Int) -> Bool {
            switch self {
            case .all: true
            case .some(let listeners): listeners.contains(listener)
            }
        }
    }

    private var exact: [Substring: Listeners] = [:]
    /// By `HostPattern.subdomains` suffix (".example.com").
    private var subdomains: [Substring: Listeners] = [:]

    init(_ routes: [Route]) {
        for route in routes {
            switch route.host {
            case .exact(let name): exact[Substring(name), default: .some([])].add(route)
            case .subdomains(let suffix): subdomains[Substring(suffix), default: .some([])].add(route)
            case nil: break
            }
        }
    }

    /// `host`: lower-cased, without port.
    func names(_ host: String, listener: Int) -> Bool {
        let host = Substring(host)
        if exact[host]?.contains(listener) == true { return true }
        return !subdomains.isEmpty && WildcardSuffixes(host).contains { subdomains[$0]?.contains(listener) == true }
    }
}
