import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyUpstream

/// The routes of one configuration, compiled once and shared read-only by every loop.
/// Matching is longest prefix first; among equal prefixes a route naming the request's
/// Host wins over one whose wildcard covers it, which wins over one naming none; then the
/// configuration's order. A request costs a hash lookup per '/' of its path and per label
/// of its Host, however many routes there are.
struct RouteTable: Sendable {
    /// By path prefix (String's hashing; `RoutesByPrefix` compares the bytes).
    private let byPrefix: [Substring: RoutesByPrefix]
    /// Per length in bytes: nil when no route's prefix has it (a path's candidate prefix of
    /// that length is not looked at); else the prefixes of that length.
    private let prefixesOfLength: [PrefixesOfLength?]

    private enum PrefixesOfLength {
        /// One prefix has this length (the usual case: "/", "/api"): the path's bytes are
        /// compared with it, without hashing.
        case one(OnePrefix)
        /// Several do: `byPrefix` is looked up.
        case several
    }

    /// The one prefix of a length and its routes. A class: reading it for a request
    /// retains one reference rather than the bytes and each of the routes' tables.
    private final class OnePrefix: Sendable {
        let bytes: [UInt8]
        let routes: RoutesByPrefix

        init(bytes: [UInt8], routes: RoutesByPrefix) {
            self.bytes = bytes
            self.routes = routes
        }
    }
    private let byName: [String: Route]
    /// The listeners on which a route names each host, for `namesHost`.
    private let hostListeners: HostListeners
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
        let routes = config.routes.enumerated().compactMap { Route($1, index: $0, listenerIndex: listenerIndex, identities: identities) }
        var routesByPrefix: [Substring: [Route]] = [:]
        var prefixBytesOfLength: [Set<[UInt8]>] = []
        for route in routes {
            routesByPrefix[Substring(route.pathPrefix), default: []].append(route)
            let length = route.pathPrefix.utf8.count
            if prefixBytesOfLength.count <= length { prefixBytesOfLength += repeatElement([], count: length + 1 - prefixBytesOfLength.count) }
            prefixBytesOfLength[length].insert(Array(route.pathPrefix.utf8))
        }
        let byPrefix = routesByPrefix.mapValues { RoutesByPrefix(characterCount: $0[0].pathPrefix.count, routes: $0) }
        self.byPrefix = byPrefix
        prefixesOfLength = prefixBytesOfLength.map { prefixes in
            guard let prefix = prefixes.first else { return nil }
            // Prefixes equal as Strings share a list; one of them alone holds the bytes
            // the path is compared with.
            guard prefixes.count == 1, let routes = byPrefix[Substring(decoding: prefix, as: UTF8.self)] else { return .several }
            return .one(OnePrefix(bytes: prefix, routes: routes))
        }
        byName = Dictionary(routes.map { ($0.name, $0) }) { first, _ in first }
        hostListeners = HostListeners(routes)
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

    func route(named name: String) -> Route? {
        byName[name]
    }

    /// `host` is the request's Host without port, lower-cased. `requiringHost`: only routes
    /// that name hosts match (a forward proxy's requests, routed by their destination).
    ///
    /// A route's prefix matches on segment boundaries ("/api" matches "/api", "/api/x", never
    /// "/apix"; "/api/" matches "/api/x"), so the only prefixes worth looking up are those
    /// ending where the path does, just before a '/' or just after one: tried longest first.
    func match(listener: Int, path: Substring, host: Substring?, requiringHost: Bool = false) -> Route? {
        // Over the path's bytes: Substring's indexing cost more than the rest of the match.
        var contiguous = path
        return contiguous.withUTF8 { bytes in
            var best: (route: Route, characterCount: Int, rank: Int)?
            // Only the lengths some route's prefix has are looked at, longest first; the
            // path's bytes are read at those alone.
            var length = Swift.min(bytes.count, prefixesOfLength.count - 1)
            while length >= 0 {
                defer { length -= 1 }
                guard let prefixes = prefixesOfLength[length] else { continue }
                let atBoundary = length == bytes.count || bytes[length] == UInt8(ascii: "/")
                    || (length > 0 && bytes[length - 1] == UInt8(ascii: "/"))
                guard atBoundary else { continue }
                let prefix = UnsafeBufferPointer(rebasing: bytes[..<length])
                let routes: RoutesByPrefix
                switch prefixes {
                case .one(let one):
                    guard one.bytes.withUnsafeBufferPointer({ $0.hasSameBytes(as: prefix) }) else { continue }
                    routes = one.routes
                case .several:
                    guard let found = byPrefix[path[..<path.utf8.index(path.utf8.startIndex, offsetBy: length)]] else { continue }
                    routes = found
                }
                // A shorter prefix has as many Characters at most: past the best one's
                // count, nothing shorter can win.
                if let best, routes.characterCount < best.characterCount { break }
                if let found = routes.match(prefix: prefix, listener: listener, host: host, requiringHost: requiringHost),
                   Self.precedes(found, routes.characterCount, best) {
                    best = (found.route, routes.characterCount, found.rank)
                }
            }
            return best?.route
        }
    }

    /// Whether a route with a prefix of `characterCount` Characters found at `rank` comes
    /// before `best`: more Characters, then a higher host rank, then earlier in the
    /// configuration. Prefixes of one path differing only by combining marks have equal counts.
    private static func precedes(_ found: (route: Route, rank: Int), _ characterCount: Int,
                                 _ best: (route: Route, characterCount: Int, rank: Int)?) -> Bool {
        guard let best else { return true }
        if characterCount != best.characterCount { return characterCount > best.characterCount }
        if found.rank != best.rank { return found.rank > best.rank }
        return found.route.index < best.route.index
    }

    /// Whether a route on `listener` names `host` (lower-cased, without port), whatever
    /// its path: a CONNECT to it is intercepted.
    func namesHost(_ host: String, listener: Int) -> Bool {
        hostListeners.names(host, listener: listener)
    }
}
