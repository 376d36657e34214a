import LatchkeyLoop

/// The idle side of a connection pool, as a value: which parked connection the next
/// exchange for a key takes, and which ones are closed for being too many or idle too long.
/// No sockets and no timers: `ConnectionPool` watches the parked connections and arms one
/// timer at `nextExpiry`.
///
/// Taken last in, first out: the most recently used connection is the warmest (its TLS
/// session and congestion window fresh) and the least likely to meet the upstream's own
/// idle timeout, while the oldest age out. Over the limit per key, the oldest of the key
/// goes; over the limit for all keys together (a forward listener makes a key per host it
/// intercepts), the oldest of all.
///
/// Every operation costs the same whatever the number of keys: the oldest of all is the
/// front of `order`, a queue of park events in the order they happened.
struct IdleConnections<Connection: AnyObject, Key: Hashable> {
    private struct Parked {
        let connection: Connection
        let serial: UInt64
    }

    /// A park event. It is live while its connection is still parked: then it is the first
    /// of its key's stack whenever it is the first live one of the queue.
    private struct Event {
        let key: Key
        let serial: UInt64
        let since: LoopInstant
    }

    /// Per key, oldest first. A key's emptied stack stays, so that the next park of its
    /// key (on a busy upstream, the one after every take) allocates nothing; they are swept
    /// when they outnumber the parked connections (`settleOrder`).
    private var stacks: [Key: [Parked]] = [:]
    /// Park events, oldest first, from `orderStart`; events of connections taken or removed
    /// since stay until they reach the front or the queue is rebuilt, so that neither a
    /// take nor a park ever searches it.
    private var order: [Event] = []
    private var orderStart = 0
    private var nextSerial: UInt64 = 0
    private(set) var limits: PoolLimits
    private(set) var count = 0
    /// The keys with a stack, emptied ones included, for tests.
    var keysHeld: Int { stacks.count }

    init(limits: PoolLimits) {
        self.limits = limits
    }

    /// The most recently parked connection for `key`, no longer parked.
    mutating func take(_ key: Key) -> Connection? {
        // One lookup of the key, not one per step: the pool is asked on every request.
        guard let index = stacks.index(forKey: key) else { return nil }
        guard let parked = stacks.values[index].popLast() else { return nil }
        count -= 1
        settleOrder()
        return parked.connection
    }

    /// Parks `connection` at `now`, which is never before an earlier park's. Returns the connection to close when a limit is passed:
    /// the oldest of the key, else the oldest of all (`connection` itself with a limit of 0).
    mutating func park(_ connection: Connection, key: Key, now: LoopInstant) -> Connection? {
        guard limits.perKey > 0, limits.total > 0 else { return connection }
        nextSerial += 1
        let parkedOfKey = stacks[key, default: []].appending(Parked(connection: connection, serial: nextSerial))
        order.append(Event(key: key, serial: nextSerial, since: now))
        count += 1
        let closed: Connection?
        if parkedOfKey > limits.perKey {
            closed = removeOldest(of: key)
        } else if count > limits.total {
            closed = removeOldest()
        } else {
            closed = nil
        }
        settleOrder()
        return closed
    }

    /// Forgets a parked connection (the upstream closed it). Returns false when it was not
    /// parked.
    mutating func remove(_ connection: Connection, key: Key) -> Bool {
        guard let index = stacks[key]?.firstIndex(where: { $0.connection === connection }) else { return false }
        stacks[key]!.remove(at: index)
        count -= 1
        settleOrder()
        return true
    }

    /// Removes and returns the connections idle for the idle timeout or longer at `now`.
    mutating func expire(now: LoopInstant) -> [Connection] {
        var expired: [Connection] = []
        while let oldest = order[orderStart...].first, oldest.since.advanced(by: limits.idleTimeout) <= now {
            expired.append(removeOldest()!)
            settleOrder()
        }
        return expired
    }

    /// When the oldest parked connection expires; nil when none is parked.
    var nextExpiry: LoopInstant? {
        order[orderStart...].first.map { $0.since.advanced(by: limits.idleTimeout) }
    }

    /// Puts new limits in force (a reload). Returns the connections over them, to close.
    mutating func apply(_ limits: PoolLimits) -> [Connection] {
        self.limits = limits
        var closed: [Connection] = []
        for key in Array(stacks.keys) {
            while let stack = stacks[key], stack.count > min(limits.perKey, limits.total) {
                closed.append(removeOldest(of: key))
            }
        }
        settleOrder()
        while count > limits.total {
            closed.append(removeOldest()!)
            settleOrder()
        }
        return closed
    }

    /// The oldest connection of `key`, which has at least one, no longer parked.
    private mutating func removeOldest(of key: Key) -> Connection {
        let parked = stacks[key]!.removeFirst()
        count -= 1
        return parked.connection
    }

    /// The oldest connection of all, no longer parked; the front of `order` must be live.
    private mutating func removeOldest() -> Connection? {
        guard let front = order[orderStart...].first else { return nil }
        orderStart += 1
        return removeOldest(of: front.key)
    }

    private func isLive(_ event: Event) -> Bool {
        stacks[event.key]?.first?.serial == event.serial
    }

    /// Drops dead events from the front, so that the front is the oldest parked connection,
    /// and rebuilds the queue when dead events outnumber the live ones: each event is
    /// appended once and dropped or copied a bounded number of times.
    private mutating func settleOrder() {
        while orderStart < order.count, !isLive(order[orderStart]) { orderStart += 1 }
        let held = order.count - orderStart
        if held - count > count + 64 {
            var live = Set<UInt64>(minimumCapacity: count)
            for stack in stacks.values { live.formUnion(stack.lazy.map(\.serial)) }
            order = order[orderStart...].filter { live.contains($0.serial) }
            orderStart = 0
        } else if orderStart > 1024, orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
        if stacks.count > 2 * count + 64 { stacks = stacks.filter { !$0.value.isEmpty } }
    }
}

private extension Array {
    /// Appends `element` and returns the new count: one access for a dictionary's value.
    mutating func appending(_ element: Element) -> Int {
        append(element)
        return count
    }
}
