import LatchkeyConfig
/// Whether a configuration loaded on SIGHUP can replace the running one, decided from the
/// two configurations alone. A reload applies whole or not at all: one key that only a
/// restart can change (the event loops, the listening sockets, the token store the running
/// identities keep their tokens in, the log's level and format) refuses all of it, and the
/// running configuration goes on serving.
public enum ReloadDecision: Sendable, Equatable {
    case apply(ConfigChanges)
    /// One problem per key that needs a restart, placed in `file` as `latchkey check` places
    /// its problems (without a line: the running configuration has none to compare with).
    case refuse([ConfigProblem])

    public init(running: Config, loaded: Config, file: String) {
        let restarts = Self.restartRequirements(running: running, loaded: loaded).map { path, running in
            ConfigProblem(file: file, path: path, message: "changes only with a restart (running: \(running))")
        }
        guard restarts.isEmpty else {
            self = .refuse(restarts)
            return
        }
        self = .apply(ConfigChanges(running: running, loaded: loaded))
    }

    /// The keys that differ and cannot change in a running process, each with its running
    /// value as the operator would write it. Never a secret: the store's password is named,
    /// not shown.
    static func restartRequirements(running: Config, loaded: Config) -> [(path: String, running: String)] {
        var found: [(String, String)] = []
        if running.server.loops != loaded.server.loops {
            found.append(("server.loops", running.server.loops.map(String.init) ?? "one per core"))
        }
        // Loops accept on the sockets they were given, and listeners are known by their
        // index in every route and policy: the list stays as it is.
        if running.listeners.count != loaded.listeners.count {
            found.append(("listeners", running.listeners.map(\.name).joined(separator: ", ")))
        }
        for (index, (before, after)) in zip(running.listeners, loaded.listeners).enumerated() {
            if before.name != after.name { found.append(("listeners[\(index)].name", before.name)) }
            if before.address != after.address { found.append(("listeners[\(index)].listen", before.address.description)) }
            // A socket's connections start with a handshake or with a request: a TLS listener
            // stays one, and a plain one stays plain;
            // and the handshake's time limit is the listener's (its certificate can change).
            if (before.tls == nil) != (after.tls == nil) {
                found.append(("listeners[\(index)].tls", before.tls == nil ? "none, plain HTTP" : "TLS"))
            } else if let timeout = before.tls?.handshakeTimeout, timeout != after.tls?.handshakeTimeout {
                found.append(("listeners[\(index)].tls.handshake_timeout", Self.written(timeout)))
            }
        }
        // Identities that go on keep the store they were made with. With none in it, the
        // running configuration has opened no store, and the loaded one's is opened then.
        if !running.identitiesInTokenStore.isEmpty {
            found += storeRequirements(running: running.store, loaded: loaded.store)
        }
        // The log handlers are made once, when logging is bootstrapped.
        if running.logging.level != loaded.logging.level { found.append(("logging.level", running.logging.level)) }
        if running.logging.format != loaded.logging.format { found.append(("logging.format", running.logging.format.rawValue)) }
        return found
    }

    /// A duration as the configuration writes it: "10s", "1500ms".
    private static func written(_ duration: Duration) -> String {
        let milliseconds = duration.nanosecondsClamped / 1_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }

    private static func storeRequirements(running: TokenStoreSettings, loaded: TokenStoreSettings) -> [(String, String)] {
        var found: [(String, String)] = []
        if running.kind != loaded.kind { found.append(("store.type", running.kind.rawValue)) }
        if running.directory != loaded.directory { found.append(("store.path", running.directory ?? "the default directory")) }
        if running.keyFile != loaded.keyFile { found.append(("store.key_file", running.keyFile ?? "none")) }
        if let before = running.redis, let after = loaded.redis {
            if before.endpoint != after.endpoint { found.append(("store.url", before.endpoint.description)) }
            if before.keyPrefix != after.keyPrefix { found.append(("store.key_prefix", before.keyPrefix)) }
            if before.password != after.password { found.append(("store.password", before.password == nil ? "none" : "not shown")) }
        }
        return found
    }
}

/// What a reload that applies changes: every new request is served by the loaded
/// configuration; these are the parts that need more than a swap.
public struct ConfigChanges: Sendable, Equatable {
    public var identities: IdentityChanges
    public var routes: RouteChanges
    /// The running configuration keeps nothing in a token store, so it opened none, and the
    /// loaded one does: the reload opens the store the loaded configuration names.
    public var opensTokenStore: Bool

    public init(identities: IdentityChanges, routes: RouteChanges, opensTokenStore: Bool) {
        self.identities = identities
        self.routes = routes
        self.opensTokenStore = opensTokenStore
    }

    public init(running: Config, loaded: Config) {
        self.init(
            identities: IdentityChanges(running: running, loaded: loaded),
            routes: RouteChanges(running: running, loaded: loaded),
            opensTokenStore: running.identitiesInTokenStore.isEmpty && !loaded.identitiesInTokenStore.isEmpty
        )
    }
}
