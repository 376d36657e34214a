import Foundation
import LatchkeyAuth
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

extension Config {
    /// The identities whose cookies the proxy keeps (`jar: proxy` on a route injecting
    /// them): their jars go to the token store too, beside any token.
    public var identitiesKeepingCookies: Set<String> {
        Set(routes.filter { $0.cookieJar == .proxy }.compactMap(\.identity))
    }
}

extension IdentityConfig {
    /// Whether the identity's tokens go to the token store. A static token is not kept:
    /// it lives in its own secret, which is re-read when it changes.
    public var keepsTokens: Bool {
        if case .staticToken = grant { return false }
        return true
    }
}
