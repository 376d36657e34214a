import LatchkeyLogging
import LatchkeySystem

/// Walks the YAML document into a `Config`: reads each value where it checks it, applies
/// defaults, checks every value and every cross-reference, and records each problem with
/// its path. It always finishes, so that
/// one run reports everything; the loader throws if anything was recorded.
struct ConfigValidator {
    struct Options {
        /// Relative file paths (secrets, CA files, Unix sockets) are taken against this.
        var baseDirectory: String?
        /// Read secret files and environment variables, and check that TLS files are
        /// readable, as `serve` would at start.
        var checkExternal: Bool
        var environment: [String: String]
    }

    let options: Options
    var diagnostics = Diagnostics()
    /// Upstream and token endpoint URLs checked so far, by their text: configurations with
    /// thousands of routes and identities name a few upstreams and IdPs thousands of
    /// times, and taking a URL apart was a tenth of validating each.
    private var upstreamURLs: [String: Result<ConfigSyntax.ParsedURL, ConfigSyntax.Failure>] = [:]

    init(options: Options) {
        self.options = options
    }

    /// `ConfigSyntax.upstreamURL(text)`, once per text.
    mutating func upstreamURL(_ text: String) -> Result<ConfigSyntax.ParsedURL, ConfigSyntax.Failure> {
        if let checked = upstreamURLs[text] { return checked }
        let checked = ConfigSyntax.upstreamURL(text)
        upstreamURLs[text] = checked
        return checked
    }

    static let defaultListen = ListenAddress.tcp(host: "127.0.0.1", port: 8080)
    static let defaultSharedSecretHeader = "X-Latchkey-Secret"
    static let inboundChecks = "shared_secret, session, client_ca_file or open: true"
    static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// - Parameter document: the root node; nil for an empty document.
    mutating func validate(_ document: ConfigNode?) -> Config {
        let root = document?.mapping(ConfigKeys.root, expected: "a mapping with keys such as listeners, credentials and routes", extensionPrefix: "x-")
        let server = validateServer(root?.mapping("server", ConfigKeys.server, expected: "a mapping"))
        let listeners = validateListeners(root?.list("listeners"), at: ConfigPath.root / "listeners")
        let credentials = validateCredentials(root?.entries("credentials"))
        let identities = validateIdentities(root?.entries("identities"), credentials: credentials)
        let store = validateStore(root?.mapping("store", ConfigKeys.store, expected: "a mapping with type, and path or url"))
        let routes = validateRoutes(root?.list("routes"), at: ConfigPath.root / "routes", listeners: listeners, credentials: credentials, identities: identities)
        let limits = validateLimits(root?.mapping("limits", ConfigKeys.limits, expected: "a mapping"))
        let logging = validateLogging(root?.mapping("logging", ConfigKeys.logging, expected: "a mapping"))
        let ca = validateCertificateAuthority(root?.mapping("ca", ConfigKeys.ca, expected: "a mapping with cert_file and key_file"))
        let config = Config(
            server: server, listeners: listeners.configs, routes: routes,
            credentials: credentials.sources, identities: identities.configs, store: store, limits: limits, logging: logging, ca: ca
        )
        // A listener entry that did not decode shifts the indexes: its problem comes first.
        if options.checkExternal, listeners.complete { checkCertificateFiles(of: config) }
        return config
    }

    // MARK: server

    private mutating func validateServer(_ raw: ConfigMapping?) -> ServerSettings {
        var settings = ServerSettings()
        guard let raw else { return settings }
        let path = raw.path
        if let loops = raw.int("loops") {
            if (1...1024).contains(loops) {
                settings.loops = loops
            } else {
                diagnostics.error(path / "loops", "out of range", expected: "an integer from 1 to 1024; omit for one per core")
            }
        }
        if let grace = raw.duration("grace_period") {
            settings.gracePeriod = grace
        }
        return settings
    }

    // MARK: listeners

    struct Listeners {
        var configs: [ListenerConfig] = []
        /// Names that exist, including those of entries that failed to decode.
        var names: Set<String> = []
        /// False when an entry failed to decode: its name is unknown, so references to
        /// missing listeners are not reported (they may be the broken entry).
        var complete = true

        /// The mode of the listener of that name; nil for one that failed to decode.
        func mode(of name: String) -> ListenerMode? {
            configs.first { $0.name == name }?.mode
        }
    }

    private mutating func validateListeners(_ raw: [ConfigNode]?, at path: ConfigPath) -> Listeners {
        var result = Listeners()
        guard let raw else {
            result.configs = [ListenerConfig(name: "main", address: Self.defaultListen)]
            result.names = ["main"]
            return result
        }
        if raw.isEmpty {
            diagnostics.error(path, "no listeners", expected: "at least one listener; omit the key for 127.0.0.1:8080")
        }
        let decoded = raw.map { $0.mapping(ConfigKeys.listener, expected: "a mapping with a listen address") }
        result.complete = !decoded.contains { $0 == nil }
        var firstByName: [String: Int] = [:]
        var firstByAddress: [String: Int] = [:]
        for case (let index, let listener?) in decoded.enumerated() {
            let itemPath = path[index]
            let listenerName = listener.string("name")
            let name = listenerName ?? "main"
            if !ConfigSyntax.isName(name) {
                diagnostics.error(itemPath / "name", "invalid name", expected: ConfigSyntax.nameExpectation)
            } else if let first = firstByName[name] {
                diagnostics.error(
                    itemPath / (listenerName == nil ? "listen" : "name"),
                    "duplicate listener name\(ConfigSyntax.quoted(name)) (also listeners[\(first)])",
                    expected: "a unique name for each listener"
                )
            } else {
                firstByName[name] = index
            }
            result.names.insert(name)

            let address: ListenAddress?
            if let listen = listener.string("listen") {
                switch ConfigSyntax.listenAddress(listen, baseDirectory: options.baseDirectory) {
                case .success(let parsed): address = parsed
                case .failure(let failure):
                    diagnostics.error(itemPath / "listen", failure.message, expected: failure.expected)
                    address = nil
                }
            } else {
                diagnostics.error(itemPath, "missing key 'listen'", expected: ConfigSyntax.listenExpectation)
                address = nil
            }
            if let address, !address.isEphemeralPort {
                if let first = firstByAddress[address.description] {
                    diagnostics.error(itemPath / "listen", "address already used by listeners[\(first)]", expected: "a different address or port")
                } else {
                    firstByAddress[address.description] = index
                }
            }

            let mode = validateListenerMode(listener)
            let rawInbound = listener.mapping("inbound", ConfigKeys.inbound, expected: "a mapping with \(Self.inboundChecks)")
            var allowedHosts: [String] = [], allowedOrigins: [String] = []
            var tls: ListenerTLSConfig?
            if mode == .forward {
                // Reported with why, and not read further.
                refuseReverseOnlyKeys(listener, inbound: rawInbound)
            } else {
                allowedHosts = validateAllowedHosts(listener)
                allowedOrigins = validateAllowedOrigins(listener)
                tls = listener.mapping("tls", ConfigKeys.listenerTLS, expected: "a mapping with cert_file and key_file, or local_ca: true")
                    .flatMap { validateListenerTLS($0, address: address) }
            }
            let inbound = validateInbound(rawInbound, mode: mode)
            let proxyAuth = validateProxyAuth(rawInbound, mode: mode)
            if case .clientCertificate = inbound, listener.node("tls") == nil {
                diagnostics.error(itemPath / "inbound" / "client_ca_file",
                                  "client certificates are asked for in a TLS handshake, and this listener has no tls",
                                  expected: "tls: on this listener (\(Self.tlsCertificateExpectation)), or another inbound check")
            }
            if let address, inbound == .loopbackOnly, proxyAuth == nil, !ConfigSyntax.isLocalOnly(address) {
                reportUnguarded(address, mode: mode, at: itemPath / "listen")
            }
            result.configs.append(ListenerConfig(
                name: name, address: address ?? Self.defaultListen, allowedHosts: allowedHosts, allowedOrigins: allowedOrigins,
                inbound: inbound, tls: tls, mode: mode, tunnel: validateTunnel(listener, mode: mode), proxyAuth: proxyAuth
            ))
        }
        return result
    }

    private mutating func validateAllowedHosts(_ listener: ConfigMapping) -> [String] {
        var allowedHosts: [String] = []
        for (hostIndex, host) in listener.strings("allowed_hosts") ?? [] {
            // "*": any Host (for a sidecar reached under names not known in advance).
            if host == "*" {
                allowedHosts.append(host)
                continue
            }
            switch ConfigSyntax.hostOrWildcard(host, allowPort: true) {
            case .success(let pattern): allowedHosts.append(pattern)
            case .failure(let failure): diagnostics.error((listener.path / "allowed_hosts")[hostIndex], failure.message, expected: failure.expected)
            }
        }
        return allowedHosts
    }

    private mutating func validateAllowedOrigins(_ listener: ConfigMapping) -> [String] {
        var allowedOrigins: [String] = []
        for (originIndex, origin) in listener.strings("allowed_origins") ?? [] {
            switch ConfigSyntax.origin(origin) {
            case .success(let origin): allowedOrigins.append(origin)
            case .failure(let failure): diagnostics.error((listener.path / "allowed_origins")[originIndex], failure.message, expected: failure.expected)
            }
        }
        return allowedOrigins
    }

    /// A listener other machines can reach needs an inbound check: without one, they would
    /// spend the credentials.
    private mutating func reportUnguarded(_ address: ListenAddress, mode: ListenerMode, at path: ConfigPath) {
        let reachable = "a listener on \(address) can be reached from other machines and would let them use the credentials; "
        switch mode {
        case .reverse:
            diagnostics.error(
                path,
                reachable + "add inbound.shared_secret to require a secret header, inbound.session for browsers with a login link, "
                    + "inbound.client_ca_file (with tls) to require a client certificate, "
                    + "or inbound.open: true to allow anyone who can reach it",
                expected: "inbound.shared_secret, inbound.session, inbound.client_ca_file or inbound.open: true"
            )
        case .forward:
            diagnostics.error(
                path,
                reachable + "add inbound.proxy_auth to require a password in Proxy-Authorization, "
                    + "inbound.shared_secret to require a secret header, or inbound.open: true to allow anyone who can reach it",
                expected: Self.forwardInboundChecks
            )
        }
    }

    /// The one exclusive check of `inbound`. `proxy_auth` is read apart (validateProxyAuth):
    /// it goes with any of them. On a forward listener, `session` and `client_ca_file` have
    /// been reported (refuseReverseOnlyKeys) and count as absent.
    private mutating func validateInbound(_ raw: ConfigMapping?, mode: ListenerMode) -> InboundAccess {
        guard let raw else { return .loopbackOnly }
        let path = raw.path
        let openValue = raw.bool("open")
        let open = openValue ?? false
        let sharedSecret = raw.mapping("shared_secret", ConfigKeys.sharedSecret, expected: "a mapping with header and one of value, env, file")
        let session = mode == .forward ? nil : raw.mapping("session", ConfigKeys.session, expected: "a mapping with key_file")
        let clientCAGiven = mode == .reverse && raw.node("client_ca_file") != nil
        let given = [
            sharedSecret.map { _ in "shared_secret" }, session.map { _ in "session" }, clientCAGiven ? "client_ca_file" : nil,
            open ? "open: true" : nil,
        ].compactMap { $0 }
        if given.count > 1 {
            diagnostics.error(path, "more than one check (\(given.joined(separator: ", ")))", expected: "one of \(Self.inboundChecks)")
            return .loopbackOnly
        }
        if open { return .open }
        if clientCAGiven { return clientCAFile(raw).map(InboundAccess.clientCertificate) ?? .loopbackOnly }
        if let session { return validateSession(session).map(InboundAccess.session) ?? .loopbackOnly }
        guard let shared = sharedSecret else {
            // On a forward listener, a refused session or client_ca_file has been reported already.
            if openValue == nil, raw.node("proxy_auth") == nil, raw.node("session") == nil, raw.node("client_ca_file") == nil {
                diagnostics.error(path, "inbound names no check", expected: mode == .forward ? Self.forwardInboundChecks : Self.inboundChecks)
            }
            return .loopbackOnly
        }
        let headerPath = path / "shared_secret" / "header"
        let header = shared.string("header") ?? Self.defaultSharedSecretHeader
        if let failure = ConfigSyntax.injectableHeader(header) {
            diagnostics.error(headerPath, failure.message, expected: failure.expected)
        }
        guard let secret = secretSource(shared) else { return .loopbackOnly }
        return .sharedSecret(header: header, secret: secret)
    }

    // MARK: credentials

    struct Credentials {
        var sources: [String: SecretSource] = [:]
        /// Names that exist, including those whose entry failed to decode.
        var names: Set<String> = []
    }

    private mutating func validateCredentials(_ raw: [(name: String, node: ConfigNode)]?) -> Credentials {
        var result = Credentials()
        for (name, entry) in raw ?? [] {
            result.names.insert(name)
            if !ConfigSyntax.isName(name) {
                diagnostics.error(entry.path, "invalid credential name", expected: ConfigSyntax.nameExpectation)
            }
            if let secret = Self.secretMapping(entry), let source = secretSource(secret) {
                result.sources[name] = source
            }
        }
        return result
    }

    /// A secret written as its own mapping: `{ value: … }`, `{ env: … }` or `{ file: … }`.
    static func secretMapping(_ node: ConfigNode) -> ConfigMapping? {
        node.mapping(ConfigKeys.secret, expected: "a mapping with one of value, env, file")
    }

    /// Exactly one of value, env, file (in a secret's own mapping or beside other keys);
    /// checked (and, with `checkExternal`, read) here so that a missing file is reported
    /// with its line.
    mutating func secretSource(_ raw: ConfigMapping) -> SecretSource? {
        let path = raw.path
        let value = raw.string("value"), env = raw.string("env"), file = raw.string("file")
        let given = [value.map { _ in "value" }, env.map { _ in "env" }, file.map { _ in "file" }].compactMap { $0 }
        guard given.count == 1 else {
            diagnostics.error(
                path, given.isEmpty ? "no secret given" : "more than one of \(given.joined(separator: ", "))",
                expected: "exactly one of value, env, file"
            )
            return nil
        }
        let source: SecretSource
        let keyPath: ConfigPath
        if let value {
            source = .inline(value)
            keyPath = path / "value"
        } else if let env {
            guard !env.isEmpty, !env.contains("="), !env.utf8.contains(where: ConfigSyntax.isControl) else {
                diagnostics.error(path / "env", "invalid environment variable name", expected: "a name such as GITHUB_TOKEN")
                return nil
            }
            source = .environment(env)
            keyPath = path / "env"
        } else {
            let file = file ?? ""
            guard !file.isEmpty else {
                diagnostics.error(path / "file", "empty path", expected: "the path of a file holding the secret")
                return nil
            }
            source = .file(ConfigSyntax.resolve(file, against: options.baseDirectory))
            keyPath = path / "file"
        }
        // Inline values are checked always (no I/O); the rest only when asked to.
        if case .inline = source {
            do {
                _ = try SecretResolver.resolve(source, environment: [:])
            } catch {
                diagnostics.error(keyPath, error.message, expected: "a non-empty value on one line")
            }
        } else if options.checkExternal {
            do {
                _ = try SecretResolver.resolve(source, environment: options.environment)
            } catch {
                diagnostics.error(keyPath, error.message, expected: nil)
            }
        }
        return source
    }

    /// With `checkExternal`, a file the proxy must read at start (CA, certificate, key).
    mutating func checkReadableFile(_ path: String, at configPath: ConfigPath) {
        guard options.checkExternal else { return }
        if !FileSystem.isReadable(path) {
            diagnostics.error(configPath, "cannot read \(path)", expected: "a readable file")
        }
    }

    // MARK: limits, logging

    private mutating func validateLimits(_ raw: ConfigMapping?) -> Limits {
        var limits = Limits()
        guard let raw else { return limits }
        let path = raw.path
        func positiveInt(_ value: UInt64?, _ key: String, maximum: UInt64 = UInt64(Int32.max)) -> Int? {
            guard let value else { return nil }
            guard value > 0, value <= maximum else {
                diagnostics.error(path / key, "out of range", expected: "a size from 1 to \(maximum)")
                return nil
            }
            return Int(value)
        }
        if let value = positiveInt(raw.byteSize("max_request_line"), "max_request_line") { limits.maxRequestLineBytes = value }
        if let value = positiveInt(raw.byteSize("max_header_bytes"), "max_header_bytes") { limits.maxHeaderBytes = value }
        if let value = raw.int("max_headers").flatMap({ positiveInt($0 < 0 ? 0 : UInt64($0), "max_headers", maximum: 100_000) }) {
            limits.maxHeaderCount = value
        }
        if let value = raw.byteSize("max_body_bytes") { limits.maxRequestBodyBytes = value }
        if let value = raw.int("max_connections").flatMap({ positiveInt($0 < 0 ? 0 : UInt64($0), "max_connections", maximum: 10_000_000) }) {
            limits.maxConnections = value
        }
        if let value = positiveDuration(raw, "head_timeout") { limits.headTimeout = value }
        if let value = positiveDuration(raw, "idle_timeout") { limits.idleTimeout = value }
        if let value = positiveDuration(raw, "body_timeout") { limits.bodyTimeout = value }
        if let value = positiveDuration(raw, "tunnel_idle_timeout") { limits.tunnelIdleTimeout = value }
        if let value = positiveDuration(raw, "upgrade_idle_timeout") { limits.upgradeIdleTimeout = value }
        if let value = raw.int("upstream_idle_connections") {
            if (0...100_000).contains(value) {
                limits.upstreamPool.perKey = value
            } else {
                diagnostics.error(path / "upstream_idle_connections", "out of range", expected: "a count from 0 (keep none) to 100000")
            }
        }
        if let value = raw.int("upstream_idle_connections_total").flatMap({
            positiveInt($0 < 0 ? 0 : UInt64($0), "upstream_idle_connections_total", maximum: 1_000_000)
        }) {
            limits.upstreamPool.total = value
        }
        if let value = positiveDuration(raw, "upstream_idle_timeout") { limits.upstreamPool.idleTimeout = value }
        return limits
    }

    /// The duration under `key`, which must be longer than zero.
    mutating func positiveDuration(_ raw: ConfigMapping, _ key: String) -> Duration? {
        guard let value = raw.duration(key) else { return nil }
        guard value > .zero else {
            diagnostics.error(raw.path / key, "must be longer than zero", expected: ConfigScalars.durationExpectation)
            return nil
        }
        return value
    }

    private mutating func validateLogging(_ raw: ConfigMapping?) -> LoggingSettings {
        var settings = LoggingSettings()
        guard let raw else { return settings }
        let path = raw.path
        if let level = raw.string("level") {
            if Self.logLevels.contains(level.lowercased()) {
                settings.level = level.lowercased()
            } else {
                diagnostics.error(path / "level", "unknown log level", expected: "one of " + Self.logLevels.joined(separator: ", "))
            }
        }
        if let format = raw.string("format") {
            if let parsed = LogFormat(rawValue: format.lowercased()) {
                settings.format = parsed
            } else {
                diagnostics.error(path / "format", "unknown log format", expected: "text or json")
            }
        }
        if let accessLog = raw.bool("access_log") { settings.accessLog = accessLog }
        return settings
    }
}

extension ListenAddress {
    /// Port 0 asks the kernel for a free port: two such listeners never collide.
    var isEphemeralPort: Bool {
        if case .tcp(_, 0) = self { return true }
        return false
    }
}
