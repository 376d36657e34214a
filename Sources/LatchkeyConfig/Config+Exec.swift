/// What `latchkey exec` runs: the configuration's routes, identities and credentials behind
/// listeners of its own, on loopback ports the system picks, so that any number of execs
/// (and a `serve` of the same file) run side by side.
extension Config {
    /// The forward proxy the child's `HTTPS_PROXY` names.
    public static let execForwardListener = "exec"
    /// The reverse listener of `LATCHKEY_URL`, for programs that take a base URL.
    public static let execReverseListener = "exec-reverse"

    /// The configuration's listeners replaced by exec's: a forward proxy whose clients
    /// present `proxySecret` (any user name), with the `tunnel:` hosts of the configuration's
    /// forward listeners and `tunnel`; and, when some route names no host, a reverse
    /// listener (only such routes can serve a client that sends its requests to a base
    /// URL). Every route serves both.
    public func forExec(proxySecret: String, tunnel: [HostPattern]) -> Config {
        var config = self
        var tunnels = listeners.filter { $0.mode == .forward }.flatMap(\.tunnel)
        for pattern in tunnel where !tunnels.contains(pattern) { tunnels.append(pattern) }
        let loopback = ListenAddress.tcp(host: "127.0.0.1", port: 0)
        config.listeners = [ListenerConfig(name: Self.execForwardListener, address: loopback, mode: .forward, tunnel: tunnels,
                                           proxyAuth: .inline(proxySecret))]
        if routes.contains(where: { $0.host == nil }) {
            config.listeners.append(ListenerConfig(name: Self.execReverseListener, address: loopback))
        }
        for index in config.routes.indices { config.routes[index].listeners = [] }
        return config
    }

    /// `--tunnel` patterns, checked as `tunnel:` entries are.
    public static func tunnelPatterns(_ texts: [String]) throws(ConfigErrors) -> [HostPattern] {
        var patterns: [HostPattern] = []
        var problems: [ConfigProblem] = []
        for (index, text) in texts.enumerated() {
            switch ConfigSyntax.tunnelPattern(text) {
            case .success(let pattern):
                patterns.append(HostPattern(pattern))
            case .failure(let failure):
                problems.append(ConfigProblem(file: commandLineSource, path: "--tunnel #\(index + 1)", message: failure.message,
                                              expected: failure.expected))
            }
        }
        guard problems.isEmpty else { throw ConfigErrors(problems) }
        return patterns
    }
}
