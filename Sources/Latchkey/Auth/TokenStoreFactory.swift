import Foundation
import LatchkeyAuth
import LatchkeyLoop
import Logging

/// Opens the token store `config` names, the one `serve`, `latchkey login` and
/// `latchkey logout` share: a `FileTokenStore` in the configured (or default) directory,
/// sealed with the configured key, for the identities whose tokens are kept. With none
/// (the quick start, static tokens only) or `store.type: memory` it is a
/// `MemoryTokenStore`, and no directory is created.
///
/// Throws a clear error for a store directory or file others can read, an unusable key, a
/// stored file the key does not open, or an encrypted one without a key. Blocks on file
/// I/O: call it at start-up, not on the cooperative pool.
public func makeTokenStore(
    config: Config,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    logger: Logger = Logger(label: "latchkey.store")
) throws(TokenStoreError) -> any TokenStore {
    let kept = config.identities.filter { $0.keepsTokens || config.identitiesKeepingCookies.contains($0.name) }.map(\.name)
    guard config.store.kind == .file, !kept.isEmpty else { return MemoryTokenStore() }
    let directory = try config.store.resolvedDirectory(environment: environment)
    let key = try StoreKey.configured(keyFile: config.store.keyFile, environment: environment)
    let store = try FileTokenStore(directory: directory, key: key, identities: kept) { notice in
        logger.warning("token store", metadata: ["detail": .string(notice)])
    }
    logger.info("token store", metadata: [
        "directory": .string(store.directory),
        "encrypted": .string(key.map { "yes, key from \($0.origin)" } ?? "no"),
    ])
    return store
}

/// Opens the file in the store's directory where `latchkey use` keeps the identities it
/// chose for routes; nil with `store.type: memory`, which keeps nothing on disk. Creates
/// the directory as the token store does (unless `creating` is false: then nil when there
/// is none), and refuses one others can reach. Blocks on file I/O: call it at start-up.
public func openRouteIdentityFile(
    config: Config, creating: Bool = true, environment: [String: String] = ProcessInfo.processInfo.environment
) throws(TokenStoreError) -> RouteIdentityFile? {
    guard config.store.kind == .file else { return nil }
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
}

extension IdentityConfig {
    /// Whether the identity's tokens go to the token store. A static token is not kept:
    /// it lives in its own secret, which is re-read when it changes.
    public var keepsTokens: Bool {
        if case .staticToken = grant { return false }
        return true
    }

    /// Whether the identity gets a new token without a person, from its own credentials
    /// (a password, a client secret, a signed assertion…). Not a seeded refresh token,
    /// which only renews, nor the grants of `latchkey login`.
    public var grantsByItself: Bool {
        if case .refreshToken = grant { return false }
        return !logsInInteractively
    }
}
