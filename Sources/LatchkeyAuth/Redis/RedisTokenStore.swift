import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig
import Synchronization

/// Tokens in Redis, for replicas that share identities: one key per identity holding the
/// same envelope as a store file (token, cookie jar and logout mark, sealed with
/// AES-256-GCM when there is a key), changed by read-modify-write transactions
/// (RedisTokenStore+Transaction), and one refresh lock key per identity
/// (RedisTokenStore+RefreshLock).
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
        try await onQueue { () throws(TokenStoreError) in try self.currentRecord(identity).token }
    }

    /// Replaces the identity's token and keeps its cookies; a token ends a logout and a
    /// misconfiguration. A value
    /// the store cannot read (another key, a newer format) is never overwritten. When Redis
    /// cannot be reached the token is kept, and written before anything else once a
    /// connection is back (a notice says so); the caller still gets the error, as the
    /// token is not in Redis yet.
    public func save(_ token: TokenSet?, identity: String) async throws(TokenStoreError) {
        try await onQueue { () throws(TokenStoreError) in
            do throws(TokenStoreError) {
                try self.withConnection { connection throws(TokenStoreError) in
                    try self.update(identity, on: connection) { record in
                        record.keep(token)
                        return true
                    }
                }
                self.link.pending[identity] = nil
            } catch where error.code == .unavailable {
                self.link.pending[identity] = .some(token)
                self.notices("Redis cannot be reached: the token of identity \(identity) stays in this process's memory "
                    + "and is written when Redis is back")
                throw error
            }
        }
    }

    /// The value keeps only the mark: read and replaced in one transaction, so that the
    /// token returned is the last one any replica stored.
    public func logOut(identity: String) async throws(TokenStoreError) -> TokenSet? {
        try await onQueue { () throws(TokenStoreError) in
            try self.withConnection { connection throws(TokenStoreError) in
                var removed: TokenSet?
                try self.update(identity, on: connection) { record in
                    removed = record.token
                    record = StoredRecord(loggedOut: true)
                    return true
                }
                // A token kept from an outage was obtained before this logout.
                self.link.pending[identity] = nil
                return removed
            }
        }
    }

    public func isLoggedOut(identity: String) async throws(TokenStoreError) -> Bool {
        try await onQueue { () throws(TokenStoreError) in try self.currentRecord(identity).loggedOut }
    }

    /// Like `saveCookies`, in the same sealed value. While Redis is away it is not kept for
    /// later: the next failure records it again.
    public func saveFailure(_ failure: FailureRecord?, identity: String) async throws(TokenStoreError) {
        try await onQueue { () throws(TokenStoreError) in
            try self.withConnection { connection throws(TokenStoreError) in
                try self.update(identity, on: connection) { record in
                    record.failure = failure
                    return true
                }
            }
        }
    }

    public func loadFailure(identity: String) async throws(TokenStoreError) -> FailureRecord? {
        try await onQueue { () throws(TokenStoreError) in try self.currentRecord(identity).failure }
    }

    public func loadCookies(identity: String) async throws(TokenStoreError) -> [String] {
        try await onQueue { () throws(TokenStoreError) in try self.currentRecord(identity).cookies ?? [] }
    }

    /// Like `save`, in the same sealed value: the token is kept. A logged-out identity
    /// keeps no cookies. While Redis is away the jar is not kept for later: its next change
    /// saves it whole.
    public func saveCookies(_ cookies: [String], identity: String) async throws(TokenStoreError) {
        try await onQueue { () throws(TokenStoreError) in
            try self.withConnection { connection throws(TokenStoreError) in
                try self.update(identity, on: connection) { record in
                    record.cookies = cookies.isEmpty || record.loggedOut ? nil : cookies
                    return true
                }
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
    /// obtained later meanwhile (the newer one stays), or a person logged the identity out
    /// since (the mark stays: a kept token came from a refresh, never from a login, which
    /// needs Redis).
    private func writePending(on connection: RedisConnection) throws(TokenStoreError) {
        for (identity, token) in link.pending.sorted(by: { $0.key < $1.key }) {
            do {
                var outcome = "wrote the token of identity \(identity) that was saved while Redis was away"
                try update(identity, on: connection) { record in
                    if record.loggedOut {
                        outcome = "identity \(identity) was logged out while Redis was away; the token saved meanwhile is dropped"
                        return false
                    }
                    if let theirs = record.token?.obtainedAt, theirs > token?.obtainedAt ?? .distantPast {
                        outcome = "a newer token of identity \(identity) was in Redis; the one saved while Redis was away is dropped"
                        return false
                    }
                    record.keep(token)
                    return true
                }
                notices(outcome)
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
    /// Tokens saved while Redis was away, by identity (nil: the token was removed).
    var pending: [String: TokenSet?] = [:]
    /// Each identity's value as this store last read or wrote it, so that `changes`
    /// reports what other replicas did and not this one's own writes.
    var known: [String: Seen] = [:]

    /// A value and the record in it ([] and an empty record for none).
    struct Seen {
        var bytes: [UInt8]
        var record: StoredRecord
    }
}
