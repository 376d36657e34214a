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

    /// A key's parked connections, oldest first. A box, which the key's park events point
    /// at: whether an event is live is then read without hashing its key again. Owned by
    /// one pool on one loop: `@exclusivity(unchecked)`, as `EventLoop` says why (each take
    /// and park checked an access at run time).
    private final class Stack {
        @exclusivity(unchecked) var parked: [Parked] = []
    }

    /// A park event. It is live while its connection is still parked: then it is the first
    /// of its stack whenever it is the first live one of the queue.
    private struct Event {
        let stack: Stack
        let serial: UInt64
        let since: LoopInstant

        var isLive: Bool { stack.parked.first?.serial == serial }
    }

    /// Per key. A key's emptied stack stays, so that the next park of its key (on a busy
    /// upstream, the one after every take) allocates nothing; they are swept when they
    /// outnumber the parked connections (`settleOrder`).
    private var stacks: [Key: Stack] = [:]
    /// The key of the last take or park and its stack: a pool whose requests go to one
    /// upstream finds the stack without hashing (a `ConnectionKey` compares by identity
    /// first). Forgotten with the stacks it may be one of.
    private var lastKey: Key?
    private var lastStack: Stack?
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
        // One lookup of the key: the pool is asked on every request.
        guard let parked = stack(for: key)?.parked.popLast() else { return nil }
        count -= 1
        settleOrder()
        return parked.connection
    }

    /// Parks `connection` at `now`, which is never before an earlier park's. Returns the connection to close when a limit is passed:
    /// the oldest of the key, else the oldest of all (`connection` itself with a limit of 0).
    mutating func park(_ connection: Connection, key: Key, now: LoopInstant) -> Connection? {
        guard limits.perKey > 0, limits.total > 0 else { return connection }
        nextSerial += 1
        let stack = stack(for: key) ?? newStack(for: key)
        stack.parked.append(Parked(connection: connection, serial: nextSerial))
        order.append(Event(stack: stack, serial: nextSerial, since: now))
        count += 1
        let closed: Connection?
        if stack.parked.count > limits.perKey {
            closed = removeOldest(of: stack)
        } else if count > limits.total {
            closed = removeOldest()
        } else {
            closed = nil
        }
        settleOrder()
        return closed
    }

    private mutating func stack(for key: Key) -> Stack? {
        if let lastStack, lastKey == key { return lastStack }
        guard let stack = stacks[key] else { return nil }
        lastKey = key
        lastStack = stack
        return stack
    }

    private mutating func newStack(for key: Key) -> Stack {
        let stack = Stack()
        stacks[key] = stack
        lastKey = key
        lastStack = stack
        return stack
    }

    /// Forgets a parked connection (the upstream closed it). Returns false when it was not
    /// parked.
    mutating func remove(_ connection: Connection, key: Key) -> Bool {
        guard let stack = stacks[key], let index = stack.parked.firstIndex(where: { $0.connection === connection }) else {
            return false
        }
        stack.parked.remove(at: index)
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
        for stack in stacks.values {
            while stack.parked.count > min(limits.perKey, limits.total) {
                closed.append(removeOldest(of: stack))
            }
        }
        settleOrder()
        while count > limits.total {
            closed.append(removeOldest()!)
            settleOrder()
        }
        return closed
    }

    /// The oldest connection of `stack`, which has at least one, no longer parked.
    private mutating func removeOldest(of stack: Stack) -> Connection {
        let parked = stack.parked.removeFirst()
        count -= 1
        return parked.connection
    }

    /// The oldest connection of all, no longer parked; the front of `order` must be live.
    private mutating func removeOldest() -> Connection? {
        guard let front = order[orderStart...].first else { return nil }
        orderStart += 1
        return removeOldest(of: front.stack)
    }

    /// Drops dead events from the front, so that the front is the oldest parked connection,
    /// and rebuilds the queue when dead events outnumber the live ones: each event is
    /// appended once and dropped or copied a bounded number of times. Sweeps the emptied
    /// stacks once they outnumber the parked connections.
    private mutating func settleOrder() {
        while orderStart < order.count, !order[orderStart].isLive { orderStart += 1 }
        let held = order.count - orderStart
        if held - count > count + 64 {
            var live = Set<UInt64>(minimumCapacity: count)
            for stack in stacks.values { live.formUnion(stack.parked.lazy.map(\.serial)) }
            order = order[orderStart...].filter { live.contains($0.serial) }
            orderStart = 0
        } else if orderStart > 1024, orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
        if stacks.count > 2 * count + 64 {
            stacks = stacks.filter { !$0.value.parked.isEmpty }
            lastKey = nil
            lastStack = nil
        }
    }
}
