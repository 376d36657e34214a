import LatchkeyHTTP

/// The Cookie request field (RFC 6265 §5.4): one field, pairs separated by "; ".
enum CookieHeader {
    /// Cookies whose names start with this are the proxy's own (`latchkey_handoff`, …):
    /// read by the proxy, never forwarded.
    static let proxyPrefix = "latchkey_"

    /// Drops every client cookie an upstream may read under one of `names`; `;` separates
    /// the pairs, and `,` too for some upstreams.
    static func remove(_ names: InjectedNames, from fields: inout HTTPFields) {
        guard fields.contains(.cookie) else { return }
        let kept = pairs(in: fields).compactMap { pair in
            names.removingMatches(from: pair, splitAt: ",")?.drop { $0 == " " }
        }
        if kept.isEmpty {
            fields.removeAll(named: .cookie)
        } else {
            fields.set(name: .cookie, value: kept.joined(separator: "; "))
        }
    }

    /// Adds a pair to the Cookie field (one field, RFC 6265 §5.4), making it if need be.
    static func append(name: String, value: String, to fields: inout HTTPFields) {
        let pair = name + "=" + value
        fields.set(name: .cookie, value: fields[.cookie].map { $0 + "; " + pair } ?? pair)
    }

    /// Every value sent for `name` (a browser sends one per matching Path).
    static func values(named name: String, in fields: HTTPFields) -> [Substring] {
        pairs(in: fields).compactMap { pair in
            QueryString.name(of: pair) == name ? pair.dropFirst(name.utf8.count + 1) : nil
        }
    }

    /// Whether Cookie field values hold one of the proxy's own cookies.
    static func holdProxyCookies(_ values: [String]) -> Bool {
        values.contains { $0.contains(proxyPrefix) }
    }

    /// Drops the proxy's own cookies, and the Cookie field if nothing else is left.
    static func removeProxyCookies(from fields: inout HTTPFields) {
        guard holdProxyCookies(fields.values(named: .cookie)) else { return }
        let kept = pairs(in: fields).filter { !$0.hasPrefix(proxyPrefix) }
        fields.removeAll(named: .cookie)
        if !kept.isEmpty { fields.append(name: .cookie, value: kept.joined(separator: "; ")) }
    }

    private static func pairs(in fields: HTTPFields) -> [Substring] {
        fields.values(named: .cookie).flatMap { field in
            field.split(separator: ";").map { $0.drop { $0 == " " } }.filter { !$0.isEmpty }
        }
    }
}
