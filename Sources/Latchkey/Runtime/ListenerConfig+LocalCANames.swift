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
            let host = HostAuthority.split(pattern).host
            names.append(String(host.hasPrefix("[") ? host.dropFirst().dropLast() : host))
        }
        var seen: Set<String> = []
        return names.filter { seen.insert($0.lowercased()).inserted }
    }
}
