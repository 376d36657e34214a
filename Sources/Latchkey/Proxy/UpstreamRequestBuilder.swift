import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyUpstream

/// Turns a client's request into the upstream's: the route's URL, the fields a proxy must
/// drop or set (RFC 9110 §7.6), and the route's credentials attached.
enum UpstreamRequestBuilder {
    /// `credential` gives the value an injection attaches (a named credential's, the
    /// identity's token or one of its captures); nil when it has none (the caller has
    /// already checked that every injection has a value). `cookieJar`: the jar whose cookies
    /// go with the request (a route with `jar: proxy`).
    static func build(
        head: RequestHead,
        route: Route,
        path: Substring,
        query: Substring?,
        clientHost: String?,
        peer: SocketAddress?,
        clientUsesTLS: Bool,
        removingField inboundSecretHeader: String?,
        cookieJar: CookieJar? = nil,
        credential: (RouteInjection) -> String?
    ) -> UpstreamRequest {
        // The client's fields that go: the hop-by-hop ones, the route's dropped ones (those
        // it injects and X-Forwarded-For among them, read first unless Connection named
        // it) and the listener's secret; a Cookie or Via field the route changes is
        // written anew.
        var removed = route.fieldLines.dropped
        let hopByHop = head.fields.hopByHopNames()
        if let hopByHop { removed.formUnion(hopByHop) }
        if let inboundSecretHeader { removed.insert(HTTPField.Name(inboundSecretHeader)) }
        let forwardedFor = route.marksForwarding && hopByHop?.contains(.xForwardedFor) != true ? head.fields[.xForwardedFor] : nil
        // A field the route injects is the injection's alone: the lines the proxy would
        // write of that name (Cookie, Via, X-Forwarded-*) give way, as a `set` did.
        let injected = route.fieldLines.injected
        let cookies = injected.contains(.cookie) ? nil : cookies(from: head.fields, without: removed, route: route, credential: credential)
        if cookies != nil { removed.insert(.cookie) }
        let via = injected.contains(.via) ? nil : route.via.map { via in
            let hop = "\(head.version.major).\(head.version.minor) \(via)"
            let earlier = removed.contains(.via) ? [] : head.fields.values(named: .via)
            return (earlier + [hop]).joined(separator: ", ")
        }
        if via != nil { removed.insert(.via) }

        // Always from `/`: the target in origin form.
        var target = route.upstreamPath(for: path)
        appendQuery(to: &target, query: query, injected: injectedQuery(route, query: query, credential: credential))

        let written = RequestHeadWriter.write(method: head.method, target: target, framing: head.framing) { writer in
            writer.append(head.fields, removing: removed)
            if route.preserveHost, let clientHost {
                writer.append(UpstreamFieldLines.host, filling: clientHost)
            } else {
                writer.append(route.fieldLines.upstreamHost)
            }
            if let cookies { writer.append(cookies) }
            if route.marksForwarding {
                appendForwarded(to: &writer, earlier: forwardedFor, clientHost: clientHost, peer: peer, clientUsesTLS: clientUsesTLS,
                                except: injected)
            }
            if let via { writer.append(name: .via, value: via) }
            forEachHeader(of: route, credential: credential) { writer.append($0, filling: $1) }
        }
        return UpstreamRequest(method: head.method, origin: route.upstream.origin, target: target, head: written,
                               options: route.options, cookieJar: cookieJar, connectionKey: route.connectionKey)
    }

    /// Each header line the route injects (made with the route, all but the token), with
    /// its credential.
    private static func forEachHeader(of route: Route, credential: (RouteInjection) -> String?,
                                      _ body: (PreparedFieldLine, String) -> Void) {
        for injection in route.injections {
            guard let headerLine = injection.headerLine, let token = credential(injection) else { continue }
            body(headerLine, token)
        }
    }

    /// The query's items when an injection changes them, nil when the query stays as it
    /// was. No client value an upstream could read under an injected name is forwarded
    /// (`InjectedNames`).
    static func injectedQuery(_ route: Route, query: Substring?, credential: (RouteInjection) -> String?) -> [String]? {
        var items: [String]? = nil
        for injection in route.injections {
            guard case .query(let name) = injection.config.target, let token = credential(injection) else { continue }
            var injected = items ?? clientQueryItems(query, without: route.injectedQueryNames)
            injected.append(name + "=" + QueryString.percentEncode(injection.config.template.render(token: token)))
            items = injected
        }
        return items
    }

    /// The Cookie field that goes in place of the client's, nil for the client's as it is
    /// (`removed` not naming it): without the proxy's own cookies (the handoff's marks,
    /// for the proxy alone) and any an upstream may read under a name the route injects,
    /// with the route's cookies. Empty when nothing is left.
    static func cookies(from fields: HTTPFields, without removed: HTTPFields.NameSet, route: Route,
                        credential: (RouteInjection) -> String?) -> HTTPFields? {
        let sent = removed.contains(.cookie) ? [] : fields.values(named: .cookie)
        guard route.injectsCookies || CookieHeader.holdProxyCookies(sent) else { return nil }
        var cookies = HTTPFields()
        for value in sent { cookies.append(name: .cookie, value: value) }
        CookieHeader.removeProxyCookies(from: &cookies)
        var clientCookiesRemoved = false
        for injection in route.injections {
            guard case .cookie(let name) = injection.config.target, let token = credential(injection) else { continue }
            if !clientCookiesRemoved {
                CookieHeader.remove(route.injectedCookieNames, from: &cookies)
                clientCookiesRemoved = true
            }
            CookieHeader.append(name: name, value: injection.config.template.render(token: token), to: &cookies)
        }
        return cookies
    }

    /// The route's injections as fields (its header lines, its cookies) and query items
    /// (nil: the query as it was), for a request made from nothing: the handoff endpoint's.
    static func injections(of route: Route, query: Substring?,
                           credential: (RouteInjection) -> String?) -> (fields: HTTPFields, query: [String]?) {
        var fields = HTTPFields()
        forEachHeader(of: route, credential: credential) { fields.append($0, filling: $1) }
        for cookie in cookies(from: HTTPFields(), without: HTTPFields.NameSet([]), route: route, credential: credential) ?? [] {
            fields.append(cookie)
        }
        return (fields, injectedQuery(route, query: query, credential: credential))
    }

    /// The client's query items, without any an upstream may read as one of `names`; `&`
    /// splits the items, and `;` too for some upstreams.
    static func clientQueryItems(_ query: Substring?, without names: InjectedNames) -> [String] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: false).compactMap { item in
            names.removingMatches(from: item, splitAt: ";").map(String.init)
        }
    }

    /// `target` (a path or a URL) with its query: the injected items when `inject` changed
    /// them, else `query`.
    static func appendQuery(to target: inout String, query: Substring?, injected items: [String]?) {
        if let items {
            if !items.isEmpty { target += "?" + items.joined(separator: "&") }
        } else if let query, !query.isEmpty {
            target += "?"
            target += query
        }
    }

    /// X-Forwarded-For gets the peer appended to what earlier proxies said (`earlier`, the
    /// client's first such field); X-Forwarded-Proto and -Host describe this hop. The
    /// client's own are gone by now (`UpstreamFieldLines.dropped`).
    private static func appendForwarded(to writer: inout RequestHeadWriter, earlier: String?, clientHost: String?,
                                        peer: SocketAddress?, clientUsesTLS: Bool, except injected: HTTPFields.NameSet) {
        if !injected.contains(.xForwardedFor) {
            let peerHost = peer?.host ?? "unix"
            writer.append(UpstreamFieldLines.forwardedFor, filling: earlier.map { $0 + ", " + peerHost } ?? peerHost)
        }
        if !injected.contains(.xForwardedProto) {
            writer.append(clientUsesTLS ? UpstreamFieldLines.forwardedProtoHTTPS : UpstreamFieldLines.forwardedProtoHTTP)
        }
        if let clientHost, !injected.contains(.xForwardedHost) { writer.append(UpstreamFieldLines.forwardedHost, filling: clientHost) }
    }
}

/// Query-string helpers (RFC 3986 §3.4), shared by the request builder and log redaction.
enum QueryString {
    static func name(of item: some StringProtocol) -> Substring {
        let text = Substring(item)
        return text[..<(text.firstIndex(of: "=") ?? text.endIndex)]
    }

    /// Percent-encodes everything outside RFC 3986 unreserved characters.
    static func percentEncode(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return out
    }

    /// The query with the values of `secret` parameters replaced, for logs.
    static func redacting(_ query: Substring, secret: Set<String>) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { item in
            let name = self.name(of: item)
            return secret.contains(String(name)) && name.count < item.count ? name + "=REDACTED" : String(item)
        }.joined(separator: "&")
    }
}
