import LatchkeyConfig
import LatchkeyServer

extension ListenerConfig {
    /// The names a `local_ca` listener's certificate covers: those its Host check accepts
    /// (ListenerPolicy), so that every name a client may use also verifies. localhost
    /// first (the certificate's CN), the loopback addresses, the address it is bound to
    /// unless that is a wildcard, and `allowed_hosts` without their ports; `*` names no
    /// host a certificate could cover.
    func localCANames(bound: SocketAddress) -> [String] {
        var names = ["localhost", "127.0.0.1", "::1"]
        if let host = bound.host, host != "0.0.0.0", host != "::" { names.append(host) }
        for pattern in allowedHosts where !pattern.contains("*") {
            names.append(Self.hostWithoutPort(pattern))
        }
        var seen: Set<String> = []
        return names.filter { seen.insert($0.lowercased()).inserted }
    }

    /// "api.local:8443" → "api.local", "[::1]:8443" → "::1".
    private static func hostWithoutPort(_ pattern: String) -> String {
        if pattern.hasPrefix("["), let close = pattern.firstIndex(of: "]") {
            return String(pattern[pattern.index(after: pattern.startIndex)..<close])
        }
        return String(pattern.prefix { $0 != ":" })
    }
}
