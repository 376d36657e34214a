#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Checks of single values: addresses, URLs, header names, host names. Each returns the
/// normalised value or a problem; none of them quotes the value in its message, since a
/// misplaced secret may sit anywhere.
enum ConfigSyntax {
    struct Failure: Error {
        var message: String
        var expected: String?

        init(_ message: String, expected: String? = nil) {
            self.message = message
            self.expected = expected
        }
    }

    static let listenExpectation = "host:port with an IP address or localhost, [ipv6]:port, a port, or unix:/path/to.sock"

    // MARK: listen addresses

    /// `127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`, `0.0.0.0:8080`, `8080` (loopback),
    /// `unix:/run/latchkey.sock` (relative paths against `baseDirectory`).
    static func listenAddress(_ text: String, baseDirectory: String?) -> Result<ListenAddress, Failure> {
        let text = text.trimmingASCIIWhitespace()
        if text.hasPrefix("unix:") {
            var path = String(text.dropFirst(5))
            guard !path.isEmpty else { return .failure(Failure("empty Unix socket path", expected: listenExpectation)) }
            path = resolve(path, against: baseDirectory)
            // sockaddr_un.sun_path holds 108 bytes including the terminating NUL.
            guard path.utf8.count <= 107 else {
                return .failure(Failure("Unix socket path is longer than 107 bytes", expected: "a shorter path"))
            }
            guard !path.utf8.contains(0) else { return .failure(Failure("NUL in Unix socket path")) }
            return .success(.unix(path: path))
        }
        if let port = Int(text) {
            return validPort(port).map { .tcp(host: "127.0.0.1", port: $0) }
        }
        let host: String
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return .failure(Failure("invalid address", expected: listenExpectation))
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = text[text.index(close, offsetBy: 2)...]
            guard ipv6Bytes(host) != nil else {
                return .failure(Failure("invalid IPv6 address", expected: listenExpectation))
            }
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                return .failure(Failure("invalid address", expected: listenExpectation))
            }
            host = String(text[..<colon]).lowercased()
            portText = text[text.index(after: colon)...]
            guard host == "localhost" || ipv4Bytes(host) != nil else {
                return .failure(Failure(
                    host.isEmpty ? "missing host" : "the listen host must be an IP address or localhost",
                    expected: listenExpectation
                ))
            }
        }
        guard let port = Int(portText) else {
            return .failure(Failure("invalid port", expected: "a port number from 0 to 65535"))
        }
        return validPort(port).map { .tcp(host: host, port: $0) }
    }

    private static func validPort(_ port: Int) -> Result<Int, Failure> {
        (0...65535).contains(port)
            ? .success(port)
            : .failure(Failure("port out of range", expected: "a port number from 0 to 65535"))
    }

    /// Reachable only from this machine: loopback addresses and Unix sockets.
    static func isLocalOnly(_ address: ListenAddress) -> Bool {
        switch address {
        case .unix:
            return true
        case .tcp(let host, _):
            if host == "localhost" { return true }
            if let bytes = ipv4Bytes(host) { return bytes[0] == 127 }
            if let bytes = ipv6Bytes(host) {
                if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }
                // ::ffff:127.x.x.x, an IPv4-mapped loopback address.
                return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
            }
            return false
        }
    }

    /// inet_pton(AF_INET): four bytes, or nil.
    static func ipv4Bytes(_ text: String) -> [UInt8]? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// inet_pton(AF_INET6): sixteen bytes, or nil.
    static func ipv6Bytes(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    // MARK: URLs

    struct ParsedURL {
        var scheme: String
        var host: String
    }

    /// An upstream base URL: http or https, a host, an optional port and path, nothing else.
    static func upstreamURL(_ text: String) -> Result<ParsedURL, Failure> {
        url(text, schemes: ["http", "https"], allowUserInfo: false, allowPath: true,
            expected: "an http or https URL such as https://api.example.com/v1")
    }

    /// An HTTP or SOCKS proxy for reaching an upstream (credentials in it are allowed).
    static func proxyURL(_ text: String) -> Result<ParsedURL, Failure> {
        url(text, schemes: ["http", "https", "socks4", "socks4a", "socks5", "socks5h"], allowUserInfo: true,
            allowPath: false, expected: "a proxy URL such as http://proxy.corp:3128")
    }

    /// The authorization endpoint a browser is sent to. It may have a query of its own
    /// (RFC 6749 §3.1), which the request's parameters are added to.
    static func authorizationURL(_ text: String) -> Result<ParsedURL, Failure> {
        endpointURL(text, example: "https://idp.example.com/authorize")
    }

    /// An endpoint Latchkey calls or sends a browser to: http or https, with a path and
    /// maybe a query of its own.
    static func endpointURL(_ text: String, example: String) -> Result<ParsedURL, Failure> {
        url(text, schemes: ["http", "https"], allowUserInfo: false, allowPath: true, allowQuery: true,
            expected: "an http or https URL such as \(example)")
    }

    private static func url(
        _ text: String, schemes: Set<String>, allowUserInfo: Bool, allowPath: Bool, allowQuery: Bool = false, expected: String
    ) -> Result<ParsedURL, Failure> {
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            return .failure(Failure("URL contains spaces or control characters", expected: expected))
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            return .failure(Failure("not a valid URL", expected: expected))
        }
        guard schemes.contains(scheme) else {
            return .failure(Failure("unsupported URL scheme", expected: expected))
        }
        guard let host = components.host, !host.isEmpty else {
            return .failure(Failure("URL has no host", expected: expected))
        }
        if !allowUserInfo, components.user != nil || components.password != nil {
            return .failure(Failure("URL must not contain a user name or password; put credentials under credentials: and inject them", expected: expected))
        }
        if !allowQuery, components.query != nil {
            return .failure(Failure("URL must not contain a query; use inject with query: for parameters", expected: expected))
        }
        if components.fragment != nil {
            return .failure(Failure("URL must not contain a fragment", expected: expected))
        }
        if let port = components.port, !(1...65535).contains(port) {
            return .failure(Failure("URL port out of range", expected: expected))
        }
        if !allowPath, !(components.path.isEmpty || components.path == "/") {
            return .failure(Failure("proxy URL must not have a path", expected: expected))
        }
        return .success(ParsedURL(scheme: scheme, host: host.lowercased()))
    }

    /// The path of a loopback redirect URI: absolute, visible ASCII, no query or fragment
    /// (the authorization server adds the query).
    static func redirectPath(_ text: String) -> Failure? {
        guard text.hasPrefix("/"), text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        else { return Failure("not an absolute path without query", expected: "a path such as /callback") }
        return nil
    }

    // MARK: names

    /// RFC 9110 §5.6.2: token = 1*tchar.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTChar)
    }

    static func isTChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Headers Latchkey manages itself, which a route may not inject: hop-by-hop fields
    /// (RFC 9110 §7.6.1, plus the non-standard Keep-Alive and Proxy-Connection) and framing.
    static let reservedHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
        "upgrade", "proxy-authorization", "proxy-authenticate", "host", "content-length",
    ]

    /// A header name a route may inject, or why not.
    static func injectableHeader(_ name: String) -> Failure? {
        guard isToken(name) else {
            return Failure("invalid header name", expected: "an HTTP field name (RFC 9110 token)")
        }
        if reservedHeaders.contains(name.lowercased()) {
            return Failure("Latchkey manages the \(name) header itself", expected: "a header other than hop-by-hop ones, Host and Content-Length")
        }
        return nil
    }

    /// A query parameter name: printable, and nothing that would change the query's
    /// structure before it is percent-encoded.
    static func isQueryName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && !"&=#+%?".utf8.contains($0) }
    }

    /// A browser origin (RFC 6454 §6.2: `scheme://host[:port]`, no path), lower-cased as
    /// browsers serialise it, for comparing with `Origin` headers.
    static func origin(_ text: String) -> Result<String, Failure> {
        let expected = "an origin such as http://localhost:3000"
        let lowered = text.trimmingASCIIWhitespace().lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) else {
            return .failure(Failure("not an http or https origin", expected: expected))
        }
        guard case .success = hostPattern(String(lowered.dropFirst(scheme.count)), allowPort: true) else {
            return .failure(Failure("invalid origin: scheme://host[:port] without a path", expected: expected))
        }
        return .success(lowered)
    }

    /// A host name or IP literal, optionally with a port, for matching `Host` headers.
    /// Returns it lowercased.
    static func hostPattern(_ text: String, allowPort: Bool) -> Result<String, Failure> {
        let lowered = text.trimmingASCIIWhitespace().lowercased()
        let expected = allowPort ? "a host name, optionally with :port" : "a host name without a port"
        var host = Substring(lowered)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return .failure(Failure("invalid host", expected: expected)) }
            let rest = host[host.index(after: close)...]
            guard ipv6Bytes(String(host[host.index(after: host.startIndex)..<close])) != nil else {
                return .failure(Failure("invalid IPv6 address", expected: expected))
            }
            if rest.hasPrefix(":") { port = rest.dropFirst() } else if !rest.isEmpty {
                return .failure(Failure("invalid host", expected: expected))
            }
            host = host[...close]
        } else if let colon = host.firstIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
            guard isHostName(host) else { return .failure(Failure("invalid host", expected: expected)) }
        } else {
            guard isHostName(host) else { return .failure(Failure("invalid host", expected: expected)) }
        }
        if let port {
            guard allowPort else { return .failure(Failure("unexpected port", expected: expected)) }
            guard let number = Int(port), (1...65535).contains(number) else {
                return .failure(Failure("invalid port", expected: expected))
            }
        }
        return .success(lowered)
    }

    /// `hostPattern`, or `*.example.com` (HostPattern.subdomains): every name under a
    /// domain. Returns it lower-cased, port included when given.
    static func hostOrWildcard(_ text: String, allowPort: Bool) -> Result<String, Failure> {
        let trimmed = text.trimmingASCIIWhitespace()
        guard trimmed.hasPrefix("*.") else { return hostPattern(text, allowPort: allowPort) }
        let domain = hostPattern(String(trimmed.dropFirst(2)), allowPort: allowPort)
        guard case .success(let lowered) = domain, !lowered.hasPrefix("["),
            !isIPv4Literal(HostAuthority.split(lowered).host) else {
            return .failure(Failure("invalid wildcard host", expected: "*. followed by a domain name, e.g. *.example.com"))
        }
        return .success("*." + lowered)
    }

    static let tunnelExpectation = "host names or *.domain patterns, e.g. [github.com, \"*.githubusercontent.com\"]"

    /// One of a forward listener's `tunnel:` hosts: an exact name or `*.domain`, never a
    /// pattern that covers every host or a whole top-level domain, since Latchkey is never
    /// an open proxy. Returns it lower-cased.
    static func tunnelPattern(_ text: String) -> Result<String, Failure> {
        let trimmed = text.trimmingASCIIWhitespace()
        if trimmed == "*" || trimmed == "*.*" {
            return .failure(Failure("a tunnel to every host would make Latchkey an open proxy", expected: tunnelExpectation))
        }
        let pattern = hostOrWildcard(text, allowPort: false)
        if case .success(let wildcard) = pattern, wildcard.hasPrefix("*."), !wildcard.dropFirst(2).contains(".") {
            return .failure(Failure("\(wildcard) covers a whole top-level domain, which would make Latchkey an open proxy for it",
                                    expected: tunnelExpectation))
        }
        return pattern.mapError { Failure($0.message, expected: tunnelExpectation) }
    }

    private static func isIPv4Literal(_ text: Substring) -> Bool {
        text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// Letters, digits, '-', '.', '_' (RFC 1123 plus the underscore common in service
    /// names); no empty labels.
    static func isHostName<S: StringProtocol>(_ text: S) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            }
        }
    }

    /// Names of credentials and listeners: a safe alphabet so that they can appear in logs,
    /// metrics labels and internal keys without quoting.
    static func isName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || "-_.".utf8.contains(byte)
        }
    }

    static let nameExpectation = "letters, digits, '-', '_' or '.', at most 64 characters"

    /// A control character: CR, LF, NUL and the rest of C0, and DEL.
    static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    /// Bytes a configured path (a route's prefix, an allow pattern) cannot hold: a space, a
    /// control character, or what ends a path in a request target ('?', '#').
    static func endsOrBreaksPath(_ byte: UInt8) -> Bool {
        isControl(byte) || byte == 0x20 || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    // MARK: echoing what the user wrote

    /// Whether a name the user wrote may be quoted back. Secrets belong under `value:`, but
    /// one pasted in as a key or a reference must not reach a terminal or CI log: quote
    /// short names, and longer ones made only of letters and separators; leave out anything
    /// long with digits, which is what tokens and keys look like.
    static func isSafeToEcho(_ text: String) -> Bool {
        let count = text.utf8.count
        guard count > 0, count <= 40 else { return false }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        if count < 16 { return true }
        return !text.utf8.contains { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// " 'name'" when it is safe to show, "" otherwise: `"unknown key" + quoted(name)`.
    static func quoted(_ text: String) -> String {
        isSafeToEcho(text) ? " '\(text)'" : ""
    }

    // MARK: paths

    /// A relative path taken against the config file's directory.
    static func resolve(_ path: String, against baseDirectory: String?) -> String {
        guard !path.hasPrefix("/"), let baseDirectory, !baseDirectory.isEmpty else { return path }
        if baseDirectory.hasSuffix("/") { return baseDirectory + path }
        return baseDirectory + "/" + path
    }
}
