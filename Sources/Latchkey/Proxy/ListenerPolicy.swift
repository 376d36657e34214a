import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer

/// Who may use one listener and with which Host values: the checks that run before a
/// request is routed, compiled once per listener. A class: every request reads its
/// listener's, and a copy of this many fields retained each of them.
final class ListenerPolicy: Sendable {
    /// The listener's name, for the log.
    let name: String
    /// Accepted Host values, lower-cased, with and without port where that applies. Nil
    /// accepts any Host (Unix sockets, which browsers cannot reach, or `allowed_hosts: ["*"]`).
    let allowedHosts: StringTable<Void>?
    /// `allowed_hosts` wildcards (`*.example.com`, `*.example.com:8443`): the names each
    /// covers, and the Host ports it takes them with ("" for a Host without one).
    let allowedDomains: [(pattern: HostPattern, ports: Set<Substring>)]
    /// `allowed_origins`, lower-cased: pages whose requests may use the credentials.
    let allowedOrigins: Set<String>
    /// A loopback listener: a page on another localhost port (`Sec-Fetch-Site: same-site`)
    /// is another site's page.
    let refusesSameSite: Bool
    let inbound: Inbound
    /// Clients reach this listener over TLS (`tls:`). A browser drops a Secure cookie set
    /// over plain HTTP (RFC 6265bis §5.7), so the proxy's cookies are Secure only here; and
    /// here a page of the proxy's own origin is `https://HOST`.
    let clientsUseTLS: Bool
    /// `mode: forward`: what the listener does as an HTTP proxy; nil on a reverse listener.
    let forward: ForwardPolicy?

    /// A forward listener's own rules, beside the routes that name hosts.
    struct ForwardPolicy: Sendable {
        /// `tunnel:`: hosts no route names that CONNECT may reach raw and plain requests
        /// untouched, with no credential added.
        let tunnel: [HostPattern]
        /// `inbound.proxy_auth`, if the listener has it.
        let proxyAuthorization: ProxyAuthorization?

        func tunnels(_ host: String) -> Bool {
            tunnel.contains { $0.matches(host) }
        }
    }

    enum Inbound: Sendable {
        case none
        /// Header name, and the credential name holding the expected value.
        case sharedSecret(header: String, credential: String)
        /// The proxy's own session cookie.
        case session(SessionGate)
        /// A client certificate, verified by the TLS handshake (`client_ca_file`).
        case clientCertificate
    }

    /// Throws when a session listener's key files cannot be read or are not private.
    /// `previous`: the listener's policy before a configuration reload, whose session gate
    /// hands its redeemed links on.
    init(config: ListenerConfig, bound: SocketAddress, previous: ListenerPolicy? = nil) throws(CryptoError) {
        name = config.name
        allowedOrigins = Set(config.allowedOrigins)
        refusesSameSite = bound.isLoopback
        clientsUseTLS = config.tls != nil
        forward = config.mode == .forward
            ? ForwardPolicy(tunnel: config.tunnel, proxyAuthorization: config.proxyAuth.map { _ in ProxyAuthorization(listener: config.name) })
            : nil
        switch config.inbound {
        case .sharedSecret(let header, _):
            inbound = .sharedSecret(header: header, credential: Config.inboundSecretName(listener: config.name))
        case .session(let settings):
            let running: SessionGate? = if case .session(let gate)? = previous?.inbound { gate } else { nil }
            inbound = .session(try SessionGate(settings: settings, secureCookie: clientsUseTLS, remembering: running))
        case .clientCertificate:
            inbound = .clientCertificate
        case .loopbackOnly, .open:
            inbound = .none
        }
        guard let port = bound.port, !config.allowedHosts.contains("*") else {
            allowedHosts = nil
            allowedDomains = []
            return
        }
        let allowed = config.allowedHosts.map { $0.lowercased() }
        allowedDomains = allowed.filter { $0.hasPrefix("*.") }.map { wildcard in
            let (name, given) = HostAuthority.split(wildcard)
            let ports: Set<Substring> = given.map { [$0] } ?? ["", Substring(String(port))]
            return (HostPattern(String(name)), ports)
        }
        // DNS-rebinding defence: a page on evil.example resolved to 127.0.0.1 still sends
        // Host: evil.example, which is not on this list.
        var hosts: Set<String> = []
        var names = ["localhost", "127.0.0.1", "[::1]"] + allowed.filter { !$0.hasPrefix("*.") }
        if let host = bound.host, !bound.isLoopback, host != "0.0.0.0", host != "::" {
            names.append(host.contains(":") ? "[\(host)]" : host)
        }
        for name in names {
            hosts.insert("\(name):\(port)")
            if port == 80 || config.allowedHosts.contains(where: { $0.lowercased() == name }) { hosts.insert(name) }
        }
        allowedHosts = StringTable(Dictionary(uniqueKeysWithValues: hosts.map { ($0, ()) }))
    }

    func acceptsHost(_ host: String?) -> Bool {
        guard let allowedHosts else { return true }
        guard let host else { return false }
        // Hosts come lower-cased nearly always: looked up as they are first.
        if allowedHosts.contains(host) { return true }
        let lowered = host.lowercased()
        if lowered != host, allowedHosts.contains(lowered) { return true }
        guard !allowedDomains.isEmpty, !lowered.hasPrefix("[") else { return false }
        let (name, port) = HostAuthority.split(lowered)
        return allowedDomains.contains { $0.pattern.matches(name) && $0.ports.contains(port ?? "") }
    }
}

/// RFC 6454 / Fetch metadata: is this a browser request sent by another site? Such a
/// request must not spend the user's credentials.
enum CrossSiteCheck {
    /// `overTLS`: the request came over TLS, where the proxy's own origin is https (RFC
    /// 6454 §4: the scheme is part of the origin).
    static func isCrossSite(_ fields: HTTPFields, host: String?, overTLS: Bool) -> Bool {
        if let site = fields[.secFetchSite], site.lowercased() == "cross-site" { return true }
        guard let origin = fields[.origin] else { return false }
        guard let host else { return true }
        return origin.lowercased() != (overTLS ? "https://" : "http://") + host.lowercased()
    }
}
