import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Tokens in Redis, for replicas that share identities: one key per identity holding the
/// same envelope as a store file (sealed with AES-256-GCM when there is a key), and one
/// refresh lock key per identity (RedisTokenStore+RefreshLock).
///
/// hiredis blocks, so every call runs on the store's own serial queue, never on the
/// cooperative pool or an event loop; commands time out after `timeout`. When Redis cannot
/// be reached, commands fail at once until the next retry (exponential back-off), the
/// store reports itself unavailable, and a token saved meanwhile is kept and written as
/// soon as a connection is back: the identities go on with the tokens they hold.
public final class RedisTokenStore: WatchableTokenStore, AvailabilityReportingStore {
    public let endpoint: RedisEndpoint
    public let keyPrefix: String
    let key: StoreKey?
    let leaseDuration: Duration
    /// Told what the store did by itself: a token written after an outage, a corrupt value
    /// replaced.
    let notices: @Sendable (String) -> Void
    private let password: String?
    private let timeout: Duration
    private let backoff: Backoff
    private let queue = DispatchQueue(label: "latchkey.redis-store")
    let link = RedisLink()
    private let status = Mutex<(availability: StoreAvailability, observers: [@Sendable (StoreAvailability) -> Void])>((.available, []))

    /// Connects once, on the calling thread, so that the start-up log says whether Redis
    /// is there; a store that cannot connect now is still returned, unavailable, and keeps
    /// trying. Call it at start-up, off the cooperative pool.
    public init(endpoint: RedisEndpoint, password: String?, keyPrefix: String = "latchkey:", key: StoreKey?,
                timeout: Duration = .seconds(2), leaseDuration: Duration = RefreshLease.duration,
                backoff: Backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(5)),
                notices: @escaping @Sendable (String) -> Void = { _ in }) {
        self.endpoint = endpoint
        self.password = password
        self.keyPrefix = keyPrefix
        self.key = key
        self.timeout = timeout
        self.leaseDuration = leaseDuration
        self.backoff = backoff
        self.notices = notices
        queue.sync { _ = try? self.withConnection { _ throws(TokenStoreError) in () } }
    }

    public var availability: StoreAvailability { status.withLock { $0.availability } }

    public func observeAvailability(_ observer: @escaping @Sendable (StoreAvailability) -> Void) {
        let now = status.withLock { status in
            status.observers.append(observer)
            return status.availability
        }
        observer(now)
    }

    /// The key of an identity's token.
    func tokenKey(_ identity: String) -> String { keyPrefix + "token:" + identity }

    /// How messages name an identity's entry.
    func entry(_ identity: String) -> String { "redis key \(tokenKey(identity))" }

    public func load(identity: String) async throws(TokenStoreError) -> TokenSet? {
        try await queue.perform { () throws(TokenStoreError) in
            let bytes = try self.withConnection { connection throws(TokenStoreError) in try self.get(identity, on: connection) }
            self.link.known[identity] = bytes ?? []
            guard let bytes else { return nil }
            return try StoreEnvelope.decode(bytes, identity: identity, key: self.key, entry: self.entry(identity)).record.token
        }
    }

    /// Replaces the identity's token. A value the store cannot read (another key, a newer
    /// format) is never overwritten. When Redis cannot be reached the token is kept, and
    /// written before anything else once a connection is back (a notice says so); the
    /// caller still gets the error, as the token is not in Redis yet.
    public func save(_ token: TokenSet?, identity: String) async throws(TokenStoreError) {
        try await queue.perform { () throws(TokenStoreError) in
            let record = StoredRecord(token: token)
            do throws(TokenStoreError) {
                try self.withConnection { connection throws(TokenStoreError) in _ = try self.write(record, identity: identity, on: connection) }
                self.link.pending[identity] = nil
            } catch where error.code == .unavailable {
                self.link.pending[identity] = record
                self.notices("Redis cannot be reached: the token of identity \(identity) stays in this process's memory "
                    + "and is written when Redis is back")
                throw error
            }
        }
    }

    func onQueue<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        try await queue.perform(body)
    }

    // MARK: on the queue

    /// Runs `body` on a live connection, connecting first if need be. An idle connection
    /// that a Redis restart closed fails its first command: that command gets one more try
    /// on a new connection before Redis counts as away. While away, calls fail at once
    /// until the back-off's next retry.
    func withConnection<T>(_ body: (RedisConnection) throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        if link.connection == nil, let retryAt = link.retryAt, ContinuousClock.now < retryAt, let failure = link.lastFailure {
            throw failure
        }
        var retried = false
        while true {
            let reused = link.connection != nil
            do {
                let result = try body(try liveConnection())
                recovered()
                return result
            } catch where error.code == .unavailable {
                link.connection = nil
                if reused && !retried {
                    retried = true
                    continue
                }
                failed(error)
                throw error
            }
        }
    }

    /// The connection, or a new one that has written what was kept while Redis was away.
    private func liveConnection() throws(TokenStoreError) -> RedisConnection {
        if let connection = link.connection { return connection }
        let connection = try RedisConnection(endpoint, password: password, timeout: timeout)
        link.connection = connection
        try writePending(on: connection)
        return connection
    }

    /// Writes the tokens saved while Redis was away, unless another replica stored a token
    /// obtained later meanwhile: the newer one stays.
    private func writePending(on connection: RedisConnection) throws(TokenStoreError) {
        for (identity, record) in link.pending.sorted(by: { $0.key < $1.key }) {
            do {
                let written = try write(record, identity: identity, on: connection, keepingNewer: true)
                notices(written ? "wrote the token of identity \(identity) that was saved while Redis was away"
                    : "a newer token of identity \(identity) was in Redis; the one saved while Redis was away is dropped")
            } catch where error.code != .unavailable {
                notices("cannot write the token of identity \(identity) saved while Redis was away: \(error.message)")
            }
            link.pending[identity] = nil
        }
    }

    /// The identity's raw value, nil when there is none.
    func get(_ identity: String, on connection: RedisConnection) throws(TokenStoreError) -> [UInt8]? {
        switch try connection.command([Array("GET".utf8), Array(tokenKey(identity).utf8)]) {
        case .string(let bytes): return bytes
        case .null: return nil
        case let other: throw refusal(other, "GET \(tokenKey(identity))")
        }
    }

    /// Sets (or, for an empty record, deletes) the identity's value after reading what is
    /// there: what this store cannot read is left alone, a corrupt value is replaced, and
    /// with `keepingNewer` a token obtained after `record`'s stays. Returns whether it wrote.
    private func write(_ record: StoredRecord, identity: String, on connection: RedisConnection,
                       keepingNewer: Bool = false) throws(TokenStoreError) -> Bool {
        if let bytes = try get(identity, on: connection) {
            do {
                let existing = try StoreEnvelope.decode(bytes, identity: identity, key: key, entry: entry(identity)).record
                if keepingNewer, let theirs = existing.token?.obtainedAt, theirs > record.token?.obtainedAt ?? .distantPast { return false }
            } catch where error.code == .corrupt {
                notices("\(error.message); replaced")
            }
        }
        let name = Array(tokenKey(identity).utf8)
        let written: [UInt8]
        let reply: RedisReply
        if record.isEmpty {
            written = []
            reply = try connection.command([Array("DEL".utf8), name])
        } else {
            written = try StoreEnvelope.encode(record, identity: identity, key: key)
            reply = try connection.command([Array("SET".utf8), name, written])
        }
        switch reply {
        case .status, .integer: break
        case let other: throw refusal(other, record.isEmpty ? "DEL" : "SET")
        }
        link.known[identity] = written
        return true
    }

    /// An answer a command should not get.
    func refusal(_ reply: RedisReply, _ command: String) -> TokenStoreError {
        guard case .error(let message) = reply else { return TokenStoreError(.refused, "\(endpoint) answered \(command) unexpectedly") }
        // Redis loading its data after a restart, or a replica that cannot serve writes
        // after a failover: worth retrying, as when it is down.
        let transient = ["LOADING", "BUSY", "MASTERDOWN", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "NOAUTH"]
        let code: TokenStoreError.Code = transient.contains(where: message.hasPrefix) ? .unavailable : .refused
        return TokenStoreError(code, "\(endpoint) refused \(command): \(message)")
    }

    private func recovered() {
        link.failures = 0
        link.retryAt = nil
        link.lastFailure = nil
        report(.available)
    }

    private func failed(_ error: TokenStoreError) {
        link.failures += 1
        link.lastFailure = error
        link.retryAt = ContinuousClock.now + backoff.delay(afterFailures: link.failures, retryAfter: nil, unit: Double.random(in: 0..<1))
        report(.unavailable(reason: error.message))
    }

    /// Tells the observers about a change of availability (not about every failed retry).
    private func report(_ availability: StoreAvailability) {
        let observers = status.withLock { status -> [@Sendable (StoreAvailability) -> Void] in
            let changed = (status.availability == .available) != (availability == .available)
            status.availability = availability
            return changed ? status.observers : []
        }
        for observer in observers { observer(availability) }
    }
}

/// What only the Redis store's queue touches: the connection, the back-off, the tokens
/// kept while Redis was away and the values last seen. `@unchecked Sendable`: every access
/// is on that one serial queue.
final class RedisLink: @unchecked Sendable {
    var connection: RedisConnection?
    var failures = 0
    var retryAt: ContinuousClock.Instant?
    var lastFailure: TokenStoreError?
    /// Records saved while Redis was away, by identity.
    var pending: [String: StoredRecord] = [:]
    /// Each identity's value as this store last read or wrote it ([] for none), so that
    /// `changes` reports what other replicas did and not this one's own writes.
    var known: [String: [UInt8]] = [:]
}
