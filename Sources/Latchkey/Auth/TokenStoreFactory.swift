import Foundation
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLoop
import Logging

/// Opens the token store `config` names, the one `serve`, `latchkey login` and
/// `latchkey logout` share: a `FileTokenStore` in the configured (or default) directory,
/// or a `RedisTokenStore` on the configured server, sealed with the configured key, for
/// the identities whose tokens are kept. With none (the quick start, static tokens only)
/// or `store.type: memory` it is a `MemoryTokenStore`, and no directory is created.
///
/// Throws a clear error for a store directory or file others can read, an unusable key, a
/// stored file the key does not open, an encrypted one without a key, or a Redis password
/// that cannot be read. A Redis server that cannot be reached is no error: the store keeps
/// trying, and says so in the log. Blocks on file and network I/O: call it at start-up,
/// not on the cooperative pool.
public func makeTokenStore(
    config: Config,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    logger: Logger = Logger(label: "latchkey.store")
) throws(TokenStoreError) -> any TokenStore {
    let kept = config.identitiesInTokenStore
    guard config.store.kind != .memory, !kept.isEmpty else { return MemoryTokenStore() }
    let key = try StoreKey.configured(keyFile: config.store.keyFile, environment: environment)
    let encrypted = key.map { "yes, key from \($0.origin)" } ?? "no"
    if let redis = config.store.redis {
        return try makeRedisStore(redis, key: key, encrypted: encrypted, environment: environment, logger: logger)
    }
    let directory = try config.store.resolvedDirectory(environment: environment)
    let store = try FileTokenStore(directory: directory, key: key, identities: kept) { notice in
        logger.warning("token store", metadata: ["detail": .string(notice)])
    }
    logger.info("token store", metadata: ["directory": .string(store.directory), "encrypted": .string(encrypted)])
    return store
}

/// The Redis store, its notices and its availability in the log: a warning when Redis
/// goes away, a line when it is back.
private func makeRedisStore(_ settings: TokenStoreSettings.Redis, key: StoreKey?, encrypted: String, environment: [String: String],
                            logger: Logger) throws(TokenStoreError) -> RedisTokenStore {
    var password: String?
    if let source = settings.password {
        do {
            password = try SecretResolver.resolve(source, environment: environment)
        } catch {
            throw TokenStoreError(.unusablePath, "cannot read store.password: \(error.message)")
        }
    }
    let store = RedisTokenStore(endpoint: settings.endpoint, password: password, keyPrefix: settings.keyPrefix, key: key) { notice in
        logger.notice("token store", metadata: ["detail": .string(notice)])
    }
    logger.info("token store", metadata: [
        "redis": .string(settings.endpoint.description),
        "key_prefix": .string(settings.keyPrefix),
        "encrypted": .string(encrypted),
    ])
    store.observeAvailability { availability in
        switch availability {
        case .available:
            logger.info("token store available", metadata: ["redis": .string(settings.endpoint.description)])
        case .unavailable(let reason):
            logger.warning("token store unavailable", metadata: [
                "redis": .string(settings.endpoint.description), "detail": .string(reason),
                "effect": "serving the tokens held in memory; saved tokens are written when it is back",
            ])
        }
    }
    return store
}

/// Opens the file in the store's directory where `latchkey use` keeps the identities it
/// chose for routes; nil with `store.type: memory`, which keeps nothing on disk. With
/// `store.type: redis` it is still a file, in `store.path` (or the default directory):
/// the choice belongs to the machine that made it, not to every replica. Creates
/// the directory as the token store does (unless `creating` is false: then nil when there
/// is none), and refuses one others can reach. Blocks on file I/O: call it at start-up.
public func openRouteIdentityFile(
    config: Config, creating: Bool = true, environment: [String: String] = ProcessInfo.processInfo.environment
) throws(TokenStoreError) -> RouteIdentityFile? {
    guard config.store.kind != .memory else { return nil }
    let directory = try config.store.resolvedDirectory(environment: environment)
    if !creating, FileSignature(path: directory) == nil { return nil }
    return try RouteIdentityFile(directory: directory)
}

extension Config {
    /// The identities whose cookies the proxy keeps (`jar: proxy` on a route injecting
    /// them, the selectable ones included): their jars go to the token store too, beside
    /// any token.
    public var identitiesKeepingCookies: Set<String> {
        Set(routes.filter { $0.cookieJar == .proxy }.flatMap(\.allowedIdentities))
    }

    /// Whether a route has several identities to choose from: then `latchkey use` may have
    /// chosen, and `serve` follows the route identity file.
    public var hasIdentityChoices: Bool {
        routes.contains { $0.allowedIdentities.count > 1 }
    }

    /// The identities that keep something in the token store, a token or a cookie jar: with
    /// none, `makeTokenStore` opens nothing.
    public var identitiesInTokenStore: [String] {
        let keepingCookies = identitiesKeepingCookies
        return identities.filter { $0.keepsTokens || keepingCookies.contains($0.name) }.map(\.name)
    }
}
