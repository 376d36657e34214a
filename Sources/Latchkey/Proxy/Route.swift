import LatchkeyAuth
import LatchkeyConfig
import LatchkeyUpstream

/// A route compiled for the hot path: strings pre-split and lower-cased once, so matching
/// and rewriting a request does no parsing of the configuration. A class, shared by every
/// request on it: copying a struct of this many fields would retain each of them.
final class Route: Sendable {
    let name: String
    /// Position in the configuration's routes: the index of this route's metrics.
    let index: Int
    let listeners: Set<Int>
    /// The first 64 of `listeners` as bits: looked at on every request.
    private let listenerBits: UInt64
    let pathPrefix: String
    /// `pathPrefix`'s UTF-8, compared with a request path's bytes.
    let pathPrefixBytes: [UInt8]
    /// The Host names it serves (lower-cased, without port); nil for any.
    let host: HostPattern?
    let upstream: UpstreamTarget
    let prefixReplacement: String?
    let injections: [RouteInjection]
    let passClientAuthorization: Bool
    let preserveHost: Bool
    let via: String?
    let cookies: CookieRewrite
    /// Query parameter names redacted in logs: the configured ones plus injected ones.
    let secretQueryParameters: Set<String>
    /// The query parameters this route injects: they never travel back to the client.
    let injectedQueryParameters: Set<String>
    /// The injected query parameters and cookies as an upstream may read their names, made
    /// once here rather than for each request.
    let injectedQueryNames: InjectedNames
    let injectedCookieNames: InjectedNames
    /// The identity's captures the injections name (`{session_id}`); empty on most routes,
    /// which then never look into a token's captures.
    let injectedCaptures: [String]
    let options: UpstreamOptions
    /// Who speaks HTTP to the upstream: Latchkey itself over pooled connections, or
    /// libcurl's full transfers where only they can (`UpstreamPath`).
    let upstreamPath: UpstreamPath
    /// The upstream pool's key for the route's upstream, made once.
    let connectionKey: ConnectionKey
    /// The identities whose tokens the route may inject; nil when it injects none.
    let identities: RouteIdentities?
    let renewal: RenewalPolicy
    let handoff: HandoffConfig?
    /// `jar: proxy`: the identity's jar goes with every request, and the upstream's cookies
    /// stay with the proxy.
    let keepsCookies: Bool
    /// Of the refusable methods (`RouteConfig.isRefusable`), those the route forwards
    /// although it injects.
    let allowedMethods: Set<String>
    /// `allow:`: the only requests the route forwards; permits all when empty.
    let allow: RouteAllowList
    /// `upgrades:`: the protocols a request may switch to through this route.
    let upgrades: UpgradeSettings
    /// Whether the upstream is told of the client (`X-Forwarded-*`): not for a forward
    /// proxy's request passed to a `tunnel:` host as the client sent it.
    let marksForwarding: Bool
    /// The fields every request drops and the lines it gets, prepared once.
    let fieldLines: UpstreamFieldLines

    /// nil when the upstream URL cannot be taken apart (validation has ruled that out).
    init?(_ config: RouteConfig, index: Int, listenerIndex: [String: Int], identities: [String: Identity], marksForwarding: Bool = true) {
        guard let target = UpstreamTarget(url: config.upstream.url) else { return nil }
        let injectedQuery = config.injections.compactMap { injection -> String? in
            if case .query(let name) = injection.target { return name }
            return nil
        }
        name = config.name
        self.index = index
        listeners = Set(config.listeners.compactMap { listenerIndex[$0] })
        listenerBits = listeners.reduce(0) { bits, index in index < 64 ? bits | 1 << UInt64(index) : bits }
        pathPrefix = config.pathPrefix
        pathPrefixBytes = Array(config.pathPrefix.utf8)
        host = config.host.map { HostPattern($0.lowercased()) }
        upstream = target
        prefixReplacement = config.prefixReplacement
        injections = config.injections.map(RouteInjection.init)
        passClientAuthorization = config.passClientAuthorization
        preserveHost = config.preserveHost
        via = config.via
        cookies = config.cookies
        secretQueryParameters = Set(config.secretQueryParameters + injectedQuery)
        injectedQueryParameters = Set(injectedQuery)
        injectedQueryNames = InjectedNames(injectedQuery)
        injectedCookieNames = InjectedNames(config.injections.compactMap { injection in
            if case .cookie(let name) = injection.target { name } else { nil }
        })
        injectedCaptures = config.injections.compactMap(\.capture)
        options = config.upstream.options
        self.identities = RouteIdentities(config, identities: identities)
        renewal = config.renewal
        handoff = config.handoff
        keepsCookies = config.cookieJar == .proxy
        connectionKey = ConnectionKey(origin: upstream.origin, options: options)
        upstreamPath = UpstreamPath(url: config.upstream.url, options: options, cookieJar: keepsCookies,
                                    forcesCurl: config.upstream.forcesLibcurl)
        allowedMethods = Set(config.allowedMethods)
        allow = RouteAllowList(config.allow)
        upgrades = config.upgrades
        self.marksForwarding = marksForwarding
        let injectedHeaders = config.injections.compactMap { injection in
            if case .header(let name) = injection.target { name } else { nil }
        }
        fieldLines = UpstreamFieldLines(upstream: target, injectsCredentials: !config.injections.isEmpty, injectedHeaders: injectedHeaders,
                                        passClientAuthorization: config.passClientAuthorization, marksForwarding: marksForwarding)
    }

    var injectsCredentials: Bool { !injections.isEmpty }
    var injectsCookies: Bool { !injectedCookieNames.isEmpty }

    /// Whether requests on `listener` may take this route (one naming no listener serves
    /// them all).
    func serves(listener: Int) -> Bool {
        if listeners.isEmpty { return true }
        return listener < 64 ? listenerBits & 1 << UInt64(listener) != 0 : listeners.contains(listener)
    }

    /// The first capture the route injects that `token` lacks (an identity whose result was
    /// made without it, or one that makes no captures): the request cannot be sent whole.
    func missingCapture(in token: IssuedToken) -> String? {
        guard !injectedCaptures.isEmpty else { return nil }
        return injectedCaptures.first { token.captures[$0] == nil }
    }

    /// Why an identity's answer cannot serve this route (no token, or one without a capture
    /// the route injects); nil when it can.
    func refusal(for result: Result<IssuedToken, IdentityUnavailable>, identity: String) -> IdentityRefusal? {
        switch result {
        case .failure(let unavailable):
            return IdentityRefusal(unavailable, identity: identity, route: name)
        case .success(let token):
            return missingCapture(in: token).map { IdentityRefusal(missingCapture: $0, identity: identity, route: name) }
        }
    }

    /// Whether `token` can be injected: there is one, with every capture the route names.
    func canInject(_ token: IssuedToken?) -> Bool {
        guard let token else { return false }
        return missingCapture(in: token) == nil
    }

    /// The path (without query) the upstream receives for a client path under this route:
    /// the prefix replaced (or kept), then the upstream's base path in front.
    func upstreamPath(for path: Substring) -> String {
        // The usual routes (no base path, the prefix kept or cut): a piece of the client's
        // path as it is, from the '/' that starts what is left, cut over the bytes in place.
        if upstream.basePath.isEmpty, prefixReplacement?.isEmpty ?? true {
            let cut = prefixReplacement == nil ? 0 : pathPrefix.utf8.count
            let piece = path.utf8.withContiguousStorageIfAvailable { bytes -> String? in
                let cut = Swift.min(cut, bytes.count)
                let from = cut < bytes.count && bytes[cut] == UInt8(ascii: "/") ? cut
                    : cut > 0 && bytes[cut - 1] == UInt8(ascii: "/") ? cut - 1 : nil
                // All of the path is copied as it is (no second validation of its UTF-8).
                return from.map { $0 == 0 ? String(path) : String(decoding: UnsafeBufferPointer(rebasing: bytes[$0...]), as: UTF8.self) }
            }
            if let piece = piece ?? nil { return piece }
        }
        let utf8 = path.utf8
        let remainder = prefixReplacement == nil ? path
            : path[(utf8.index(utf8.startIndex, offsetBy: pathPrefix.utf8.count, limitedBy: utf8.endIndex) ?? utf8.endIndex)...]
        var rest = (prefixReplacement ?? "") + remainder
        if rest.isEmpty { return upstream.basePath.isEmpty ? "/" : upstream.basePath }
        if rest.utf8.first != UInt8(ascii: "/") { rest = "/" + rest }
        return upstream.basePath + rest
    }
}
