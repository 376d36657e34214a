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
        // One copy of the client's fields without those that go, with room for what is
        // added below: the hop-by-hop ones, the route's dropped ones (X-Forwarded-For among
        // them, read first unless Connection named it) and the listener's secret.
        var removed = route.fieldLines.dropped
        let hopByHop = head.fields.hopByHopNames()
        if let hopByHop { removed.formUnion(hopByHop) }
        if let inboundSecretHeader { removed.insert(HTTPField.Name(inboundSecretHeader)) }
        let forwardedFor = route.marksForwarding && hopByHop?.contains(.xForwardedFor) != true ? head.fields[.xForwardedFor] : nil
        var fields = HTTPFields(head.fields, removing: removed, reservingCapacity: 5 + route.injections.count)
        if route.preserveHost, let clientHost {
            fields.append(UpstreamFieldLines.host, filling: clientHost)
        } else {
            fields.append(route.fieldLines.upstreamHost)
        }
        // The proxy's own cookies (the handoff's marks) are for the proxy alone.
        CookieHeader.removeProxyCookies(from: &fields)
        if route.marksForwarding {
            appendForwarded(to: &fields, earlier: forwardedFor, clientHost: clientHost, peer: peer, clientUsesTLS: clientUsesTLS)
        }
        if let via = route.via {
            let hop = "\(head.version.major).\(head.version.minor) \(via)"
            if let existing = fields[.via] { fields.set(name: .via, value: existing + ", " + hop) } else { fields.append(name: .via, value: hop) }
        }

        let queryItems = inject(route, into: &fields, query: query, credential: credential)
        // Always from `/`: the target in origin form.
        var target = route.upstreamPath(for: path)
        appendQuery(to: &target, query: query, injected: queryItems)

        let body: UpstreamBody
        switch head.framing {
        case .none: body = .none
        case .length(let length): body = .length(length)
        case .chunked: body = .streaming
        }
        return UpstreamRequest(method: head.method, origin: route.upstream.origin, target: target, fields: fields, body: body,
                               options: route.options, cookieJar: cookieJar, connectionKey: route.connectionKey)
    }

    /// Attaches the route's credentials to `fields`, or to the query: returns the query's
    /// items when an injection changed them, nil when the query stays as it was. No client
    /// value an upstream could read under an injected name is forwarded (`InjectedNames`).
    static func inject(_ route: Route, into fields: inout HTTPFields, query: Substring?,
                       credential: (RouteInjection) -> String?) -> [String]? {
        var queryItems: [String]? = nil
        var clientCookiesRemoved = false
        for injection in route.injections {
            guard let token = credential(injection) else { continue }
            switch injection.config.target {
            case .header:
                // The route made the line, all but the token (every header injection has one).
                guard let headerLine = injection.headerLine else { preconditionFailure("header injection without its prepared line") }
                fields.set(headerLine, filling: token)
            case .query(let name):
                var items = queryItems ?? clientQueryItems(query, without: route.injectedQueryNames)
                items.append(name + "=" + QueryString.percentEncode(injection.config.template.render(token: token)))
                queryItems = items
            case .cookie(let name):
                if !clientCookiesRemoved {
                    CookieHeader.remove(route.injectedCookieNames, from: &fields)
                    clientCookiesRemoved = true
                }
                CookieHeader.append(name: name, value: injection.config.template.render(token: token), to: &fields)
            }
        }
        return queryItems
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
    private static func appendForwarded(to fields: inout HTTPFields, earlier: String?, clientHost: String?, peer: SocketAddress?,
                                        clientUsesTLS: Bool) {
        let peerHost = peer?.host ?? "unix"
        fields.append(UpstreamFieldLines.forwardedFor, filling: earlier.map { $0 + ", " + peerHost } ?? peerHost)
        fields.append(clientUsesTLS ? UpstreamFieldLines.forwardedProtoHTTPS : UpstreamFieldLines.forwardedProtoHTTP)
        if let clientHost { fields.append(UpstreamFieldLines.forwardedHost, filling: clientHost) }
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
