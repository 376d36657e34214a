/// The request-target of a request to a forward proxy (RFC 9112 §3.2): absolute-form
/// (`GET http://api.example.com/x`) for requests the proxy makes on the client's behalf,
/// authority-form (`CONNECT api.example.com:443`) for tunnels, origin-form (`GET /x`) for
/// requests addressed to the proxy itself.
public enum ProxyTarget: Equatable, Sendable {
    case origin
    /// `path` starts with "/" (an empty path is "/", RFC 9112 §3.2.2) and keeps its query.
    case absolute(scheme: Scheme, authority: TargetAuthority, path: Substring)
    case authority(TargetAuthority)

    public enum Scheme: String, Sendable {
        case http
        case https

        public var defaultPort: UInt16 { self == .http ? 80 : 443 }
    }

    /// Nil for a target this method may not have: CONNECT takes the authority-form only
    /// (RFC 9110 §9.3.6), other methods never; a userinfo, a fragment or a port out of
    /// range is refused (RFC 9110 §4.2.4: a sender must not send userinfo).
    public init?(method: String, target: String) {
        let isConnect = method == "CONNECT"
        if target.utf8.first == UInt8(ascii: "/") {
            guard !isConnect else { return nil }
            self = .origin
            return
        }
        if isConnect {
            guard let authority = TargetAuthority(target[...], defaultPort: nil) else { return nil }
            self = .authority(authority)
            return
        }
        guard let schemeEnd = target.utf8.firstIndex(of: UInt8(ascii: ":")),
              let scheme = Scheme(rawValue: target[..<schemeEnd].lowercased()),
              target[schemeEnd...].hasPrefix("://") else { return nil }
        let rest = target[target.utf8.index(schemeEnd, offsetBy: 3)...]
        let pathStart = rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        guard let authority = TargetAuthority(rest[..<pathStart], defaultPort: scheme.defaultPort) else { return nil }
        let path = rest[pathStart...]
        guard !path.utf8.contains(UInt8(ascii: "#")) else { return nil }
        self = .absolute(scheme: scheme, authority: authority, path: path.utf8.first == UInt8(ascii: "/") ? path : Substring("/" + path))
    }
}

/// A host and port a forward-proxy client asked for: the host lower-cased, an IPv6 literal
/// without its brackets.
public struct TargetAuthority: Hashable, Sendable, CustomStringConvertible {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `defaultPort` nil: the port is required (authority-form).
    init?(_ text: Substring, defaultPort: UInt16?) {
        let utf8 = text.utf8
        var hostEnd = text.endIndex
        var host: Substring
        if utf8.first == UInt8(ascii: "[") {
            guard let close = utf8.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = text[text.utf8.index(after: text.startIndex)..<close]
            guard !host.isEmpty, host.utf8.allSatisfy({ ASCII.hexValue($0) != nil || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { return nil }
            hostEnd = text.utf8.index(after: close)
        } else {
            hostEnd = utf8.firstIndex(of: UInt8(ascii: ":")) ?? text.endIndex
            host = text[..<hostEnd]
            // RFC 3986 §3.2.2 reg-name, without percent-encoding (no DNS name needs it).
            guard !host.isEmpty, host.utf8.allSatisfy({ ASCII.isDigit($0) || ASCII.lowercase($0) &- 0x61 < 26 || $0 == UInt8(ascii: "-")
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") }) else { return nil }
        }
        let portText = text[hostEnd...]
        if portText.isEmpty {
            guard let defaultPort else { return nil }
            port = defaultPort
        } else {
            let digits = portText.dropFirst()
            guard portText.utf8.first == UInt8(ascii: ":"), !digits.isEmpty, digits.utf8.count <= 5,
                  digits.utf8.allSatisfy(ASCII.isDigit), let value = UInt16(digits), value > 0 else { return nil }
            port = value
        }
        self.host = host.lowercased()
    }

    /// `host:port`, an IPv6 literal in brackets: as a URL's or a Host field's authority.
    public var description: String { "\(hostForURL):\(port)" }

    /// The host as a URL or a Host field writes it.
    public var hostForURL: String { host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host }
}
