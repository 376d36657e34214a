/// Where identities keep their tokens between runs (`store:`).
public struct TokenStoreSettings: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// One private file per identity, sealed when a key is given.
        case file
        /// Nothing survives the process: for throwaway runs.
        case memory
        /// A Redis server that several replicas share.
        case redis
    }

    /// The Redis store's server, key prefix and password.
    public struct Redis: Sendable, Equatable {
        public var endpoint: RedisEndpoint
        public var keyPrefix: String
        /// Sent with AUTH; only ever an environment variable or a file.
        public var password: SecretSource?

        public static let defaultKeyPrefix = "latchkey:"

        public init(endpoint: RedisEndpoint, keyPrefix: String = Redis.defaultKeyPrefix, password: SecretSource? = nil) {
            self.endpoint = endpoint
            self.keyPrefix = keyPrefix
            self.password = password
        }
    }

    public var kind: Kind
    /// The file store's directory, which also keeps the identities `latchkey use` chose for
    /// routes (with Redis too: only tokens and cookie jars go to Redis); nil for the
    /// default, `$XDG_STATE_HOME/latchkey` or `~/.local/state/latchkey`, found when the
    /// store is opened.
    public var directory: String?
    /// A file holding the key that seals the file store's files or the Redis store's
    /// values; the key may also come from `LATCHKEY_STORE_KEY` or a systemd credential.
    public var keyFile: String?
    /// Set for `type: redis`.
    public var redis: Redis?

    public init(kind: Kind = .file, directory: String? = nil, keyFile: String? = nil, redis: Redis? = nil) {
        self.kind = kind
        self.directory = directory
        self.keyFile = keyFile
        self.redis = redis
    }
}
