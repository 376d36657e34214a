import LatchkeyLoop

/// The idle side of a connection pool, as a value: which parked connection the next
/// exchange for a key takes, and which ones are closed for being too many or idle too long.
/// No sockets and no timers: `ConnectionPool` watches the parked connections and arms one
/// timer at `nextExpiry`.
///
/// Taken last in, first out: the most recently used connection is the warmest (its TLS
/// session and congestion window fresh) and the least likely to meet the upstream's own
/// idle timeout, while the oldest age out. Over `limitPerKey`, the oldest of the key goes.
struct IdleConnections<Connection: AnyObject, Key: Hashable> {
    private struct Parked {
        let connection: Connection
        let since: LoopInstant
    }

    /// Per key, oldest first.
    private var stacks: [Key: [Parked]] = [:]
    let limitPerKey: Int
    let idleTimeout: Duration
    private(set) var count = 0

    init(limitPerKey: Int, idleTimeout: Duration) {
        self.limitPerKey = limitPerKey
        self.idleTimeout = idleTimeout
    }

    /// The most recently parked connection for `key`, no longer parked.
    mutating func take(_ key: Key) -> Connection? {
        guard let parked = stacks[key]?.popLast() else { return nil }
        count -= 1
        if stacks[key]?.isEmpty == true { stacks[key] = nil }
        return parked.connection
    }

    /// Parks `connection` at `now`. Returns the connection to close when the key is over its
    /// limit: the oldest one (`connection` itself with a limit of 0).
    mutating func park(_ connection: Connection, key: Key, now: LoopInstant) -> Connection? {
        guard limitPerKey > 0 else { return connection }
        stacks[key, default: []].append(Parked(connection: connection, since: now))
        count += 1
        guard stacks[key]!.count > limitPerKey else { return nil }
        count -= 1
        return stacks[key]!.removeFirst().connection
    }

    /// Forgets a parked connection (the upstream closed it). Returns false when it was not
    /// parked.
    mutating func remove(_ connection: Connection, key: Key) -> Bool {
        guard let index = stacks[key]?.firstIndex(where: { $0.connection === connection }) else { return false }
        stacks[key]!.remove(at: index)
        count -= 1
        if stacks[key]!.isEmpty { stacks[key] = nil }
        return true
    }

    /// Removes and returns the connections idle for `idleTimeout` or longer at `now`.
    mutating func expire(now: LoopInstant) -> [Connection] {
        var expired: [Connection] = []
        for key in Array(stacks.keys) {
            let stack = stacks[key]!
            let kept = stack.drop { $0.since.advanced(by: idleTimeout) <= now }
            guard kept.count < stack.count else { continue }
            expired += stack[..<kept.startIndex].map(\.connection)
            stacks[key] = kept.isEmpty ? nil : Array(kept)
        }
        count -= expired.count
        return expired
    }

    /// When the oldest parked connection expires; nil when none is parked.
    var nextExpiry: LoopInstant? {
        stacks.values.compactMap { $0.first?.since.advanced(by: idleTimeout) }.min()
    }
}
