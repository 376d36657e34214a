extension ConfigValidator {
    static let modeExpectation = "reverse (the default: clients address the proxy) or forward (an HTTP proxy for HTTP_PROXY/HTTPS_PROXY clients)"
    static let forwardInboundChecks = "inbound.proxy_auth (Proxy-Authorization), inbound.shared_secret or inbound.open: true"

    /// `listeners[].mode`: reverse unless it says forward.
    mutating func validateListenerMode(_ listener: ConfigMapping) -> ListenerMode {
        guard let text = listener.string("mode") else { return .reverse }
        guard let mode = ListenerMode(rawValue: text.lowercased()) else {
            diagnostics.error(listener.path / "mode", "unknown mode\(ConfigSyntax.quoted(text))", expected: Self.modeExpectation)
            return .reverse
        }
        return mode
    }

    /// The keys a forward listener cannot use, each reported with why, so that the caller
    /// reads none of them. Its requests are routed by their target host, and its clients
    /// speak plain HTTP to it: an https:// target's TLS travels inside the CONNECT tunnel.
    mutating func refuseReverseOnlyKeys(_ listener: ConfigMapping, inbound: ConfigMapping?) {
        let path = listener.path
        if listener.node("tls") != nil {
            diagnostics.error(path / "tls", "TLS on a forward listener: clients reach an HTTP proxy in plain HTTP "
                + "(HTTPS_PROXY=http://…) and carry TLS inside their CONNECT tunnels, which Latchkey intercepts with its local CA",
                expected: "no tls on a mode: forward listener")
        }
        if listener.node("allowed_hosts") != nil {
            diagnostics.error(path / "allowed_hosts", "a forward listener routes each request by its target host, not by a Host it answers to",
                              expected: "no allowed_hosts; name the hosts in the routes' host: or the listener's tunnel:")
        }
        if listener.node("allowed_origins") != nil {
            diagnostics.error(path / "allowed_origins", "a forward listener's requests are routed by their target host, "
                + "so a page's origin is judged against that host, not against the proxy's own",
                expected: "no allowed_origins on a mode: forward listener")
        }
        guard let inbound else { return }
        if inbound.node("session") != nil {
            diagnostics.error(inbound.path / "session", "the session cookie belongs to the proxy's own origin, "
                + "and a forward listener's requests are routed by their target host, whose cookies they carry",
                expected: Self.forwardInboundChecks)
        }
        if inbound.node("client_ca_file") != nil {
            diagnostics.error(inbound.path / "client_ca_file", "client certificates are asked for in a TLS handshake with the listener, "
                + "and clients reach a forward listener in plain HTTP",
                expected: Self.forwardInboundChecks)
        }
    }

    /// `listeners[].tunnel`: hosts no route names that a forward listener passes through
    /// untouched. Exact names or `*.domain`, never a pattern that covers every host or a
    /// whole top-level domain: Latchkey is never an open proxy.
    mutating func validateTunnel(_ listener: ConfigMapping, mode: ListenerMode) -> [HostPattern] {
        let path = listener.path / "tunnel"
        guard let nodes = listener.list("tunnel") else { return [] }
        guard mode == .forward else {
            diagnostics.error(path, "tunnel on a reverse listener: only an HTTP proxy is asked to CONNECT to a host",
                              expected: "mode: forward on this listener, or no tunnel")
            return []
        }
        if nodes.isEmpty {
            diagnostics.error(path, "empty list", expected: ConfigSyntax.tunnelExpectation + "; omit the key to refuse every host no route names")
        }
        var patterns: [HostPattern] = []
        for (index, node) in nodes.enumerated() {
            guard let host = node.string() else { continue }
            switch ConfigSyntax.tunnelPattern(host) {
            case .success(let pattern): patterns.append(HostPattern(pattern))
            case .failure(let failure): diagnostics.error(path[index], failure.message, expected: failure.expected)
            }
        }
        return patterns
    }

    /// `inbound.proxy_auth`: the password clients send with `Proxy-Authorization: Basic`
    /// (any user name). A check besides the listener's other inbound check, on forward
    /// listeners only: no client sends Proxy-Authorization to a server it addresses itself.
    mutating func validateProxyAuth(_ inbound: ConfigMapping?, mode: ListenerMode) -> SecretSource? {
        guard let inbound, inbound.node("proxy_auth") != nil else { return nil }
        let path = inbound.path / "proxy_auth"
        guard mode == .forward else {
            diagnostics.error(path, "proxy_auth on a reverse listener: clients send Proxy-Authorization only to a proxy they were configured to use",
                              expected: "mode: forward on this listener, or inbound.shared_secret")
            return nil
        }
        guard let secret = inbound.mapping("proxy_auth", ConfigKeys.secret, expected: "a mapping with one of value, env, file") else { return nil }
        return secretSource(secret)
    }
}
