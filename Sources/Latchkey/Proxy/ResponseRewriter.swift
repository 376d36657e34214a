import LatchkeyConfig
import LatchkeyHTTP

/// Rewrites an upstream response head for the client's view of the proxy: links that
/// point at the upstream point back at the proxy, cookies are scoped to the proxy's
/// origin and the route's prefix.
struct ResponseRewriter {
    let route: Route
    /// The Host the client addressed the proxy by, e.g. "127.0.0.1:8080".
    let clientHost: String?
    /// The client is on loopback (where, over plain HTTP, a Secure cookie would be dropped).
    let clientOnLoopback: Bool
    /// The client reached the proxy over TLS (ListenerPolicy.clientsUseTLS).
    let clientUsesTLS: Bool

    func rewrite(_ fields: inout HTTPFields) {
        // Most responses have none of them: one pass says so.
        guard fields.containsAny(of: Self.rewrittenNames) else { return }
        rewrite(.location, in: &fields, rewriteLocation)
        rewrite(.contentLocation, in: &fields, rewriteLocation)
        rewrite(.setCookie, in: &fields, rewriteSetCookie)
    }

    private static let rewrittenNames = HTTPFields.NameSet([.location, .contentLocation, .setCookie])

    /// Each `name` field's value through `rewriting`; a field it leaves alone keeps its line.
    private func rewrite(_ name: HTTPField.Name, in fields: inout HTTPFields, _ rewriting: (String) -> String) {
        var next = 0
        while let index = fields.firstIndex(named: name, from: next) {
            let value = fields.value(at: index)
            let rewritten = rewriting(value)
            if rewritten != value { fields[index].value = rewritten }
            next = index + 1
        }
    }

    /// RFC 9110 §10.2.2: Location may be absolute or relative. Absolute URLs on the
    /// upstream's origin and paths under its base path are mapped to the route's prefix;
    /// anything else (another site) is left alone.
    func rewriteLocation(_ location: String) -> String {
        let origin = route.upstream.origin
        var path: Substring
        var absolute = false
        if location.lowercased().hasPrefix(origin.lowercased()) {
            path = location.dropFirst(origin.count)
            guard path.isEmpty || path.first == "/" || path.first == "?" else { return location }
            absolute = true
        } else if location.hasPrefix("/") && !location.hasPrefix("//") {
            path = Substring(location)
        } else {
            return location
        }
        guard let mapped = mapUpstreamPath(path) else { return location }
        let scrubbed = withoutInjectedQuery(mapped)
        if absolute, let clientHost { return (clientUsesTLS ? "https://" : "http://") + clientHost + scrubbed }
        return scrubbed
    }

    /// An upstream that redirects keeps the query it was sent, which holds the route's
    /// injected credential (`/movie` → `/movie/?api_key=…`): the client must not get it.
    func withoutInjectedQuery(_ target: String) -> String {
        guard !route.injectedQueryParameters.isEmpty, let mark = target.firstIndex(of: "?") else { return target }
        let kept = target[target.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false)
            .filter { !route.injectedQueryParameters.contains(String(QueryString.name(of: $0))) }
        return kept.isEmpty ? String(target[..<mark]) : target[..<mark] + "?" + kept.joined(separator: "&")
    }

    /// An upstream path (with any query) as the client must request it, or nil when it
    /// is outside what this route exposes.
    func mapUpstreamPath(_ path: Substring) -> String? {
        let base = route.upstream.basePath
        var rest = path
        if !base.isEmpty {
            guard path.hasPrefix(base) else { return nil }
            rest = path.dropFirst(base.count)
            guard rest.isEmpty || rest.first == "/" || rest.first == "?" else { return nil }
        }
        guard let replacement = route.prefixReplacement else { return rest.isEmpty ? "/" : String(rest) }
        if !replacement.isEmpty {
            guard rest.hasPrefix(replacement) else { return nil }
            rest = rest.dropFirst(replacement.count)
        }
        var prefix = route.pathPrefix
        if prefix.hasSuffix("/") && rest.first == "/" { prefix.removeLast() }
        let mapped = prefix + rest
        return mapped.isEmpty ? "/" : mapped
    }

    /// RFC 6265 §4.1: Domain is removed or mapped, Path mapped to the route's prefix,
    /// Secure dropped only for plain-HTTP loopback clients when configured (over TLS the
    /// browser keeps a Secure cookie).
    func rewriteSetCookie(_ header: String) -> String {
        rewriteSetCookie(header, domain: route.cookies.domain, mapPath: route.cookies.mapPath,
                         keepSecure: clientUsesTLS || !(route.cookies.dropSecureOnLoopback && clientOnLoopback))
    }

    /// A handoff endpoint's cookie for the browser: the session must work on the proxy's
    /// origin whatever the route's `cookies:` say about relayed ones. Domain removed (a
    /// host-only cookie of the proxy), Path mapped (the route's prefix when the endpoint
    /// gave none, since the browser's default path would be the redirect's), Secure only
    /// when the client speaks HTTPS to the proxy; the other attributes kept.
    func rewriteHandoffCookie(_ header: String) -> String {
        rewriteSetCookie(header, domain: .remove, mapPath: true, keepSecure: clientUsesTLS, pathIfMissing: route.pathPrefix)
    }

    private func rewriteSetCookie(_ header: String, domain: CookieRewrite.DomainRule, mapPath: Bool, keepSecure: Bool,
                                  pathIfMissing: String? = nil) -> String {
        var parts = header.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        guard !parts.isEmpty else { return header }
        var result = [String(parts.removeFirst())]
        var hasPath = false
        for attribute in parts {
            let name = attribute.prefix { $0 != "=" }.lowercased()
            switch name {
            case "domain":
                switch domain {
                case .remove: continue
                case .keep: result.append(String(attribute))
                case .map(let domain): result.append("Domain=" + domain)
                }
            case "path" where mapPath:
                hasPath = true
                let value = attribute.drop { $0 != "=" }.dropFirst()
                result.append("Path=" + (mapUpstreamPath(value) ?? route.pathPrefix))
            case "secure" where !keepSecure:
                continue
            default:
                if name == "path" { hasPath = true }
                result.append(String(attribute))
            }
        }
        if !hasPath, let pathIfMissing { result.append("Path=" + pathIfMissing) }
        return result.joined(separator: "; ")
    }
}
