import LatchkeyLoop
import LatchkeyTestSupport
import Testing
@testable import LatchkeyUpstream

/// The pool's decisions, with stand-in connections and instants: no sockets, no timers.
struct IdleConnectionsTests {
    final class Connection {
        let name: String
        init(_ name: String) { self.name = name }
    }

    static let t0 = LoopInstant(nanoseconds: 1_000_000_000)
    static func at(_ seconds: Int) -> LoopInstant { t0.advanced(by: .seconds(seconds)) }

    static func pool(limit: Int = 2, total: Int = 100) -> IdleConnections<Connection, String> {
        IdleConnections(limits: PoolLimits(perKey: limit, total: total, idleTimeout: .seconds(30)))
    }

    @Test func theLastParkedIsTakenFirstAndOnlyForItsKey() {
        var pool = Self.pool()
        let a = Connection("a"), b = Connection("b"), other = Connection("other")
        #expect(pool.park(a, key: "up", now: Self.t0) == nil)
        #expect(pool.park(b, key: "up", now: Self.at(1)) == nil)
        #expect(pool.park(other, key: "elsewhere", now: Self.at(1)) == nil)
        #expect(pool.count == 3)
        #expect(pool.take("up") === b)
        #expect(pool.take("up") === a)
        #expect(pool.take("up") == nil)
        #expect(pool.take("elsewhere") === other)
        #expect(pool.count == 0)
    }

    @Test func emptiedKeysAreSweptOnceTheyOutnumberTheParked() {
        var pool = Self.pool()
        let kept = Connection("kept")
        _ = pool.park(kept, key: "busy", now: Self.t0)
        for host in 0..<10_000 {
            let connection = Connection("h\(host)")
            _ = pool.park(connection, key: "host-\(host)", now: Self.at(1))
            #expect(pool.take("host-\(host)") === connection)
            #expect(pool.keysHeld <= 2 * pool.count + 64)
        }
        #expect(pool.take("busy") === kept)
        #expect(pool.count == 0)
    }

    /// The key used last is found without hashing; once its emptied stack is swept, what
    /// is parked for it next must be in the pool's stacks, where removal and new limits look.
    @Test func theKeyUsedLastIsFoundAfterItsStackIsSwept() {
        var pool = Self.pool()
        for host in 0..<200 {
            let key = "host-\(host)", taken = Connection("t\(host)"), parked = Connection("p\(host)")
            _ = pool.park(taken, key: key, now: Self.at(1))
            #expect(pool.take(key) === taken)
            _ = pool.park(parked, key: key, now: Self.at(1))
            let removed = pool.remove(parked, key: key)
            #expect(removed, "host \(host)")
        }
        #expect(pool.count == 0)
    }

    @Test func overTheLimitTheOldestOfTheKeyIsClosed() {
        var pool = Self.pool(limit: 2)
        let a = Connection("a"), b = Connection("b"), c = Connection("c")
        _ = pool.park(a, key: "up", now: Self.t0)
        _ = pool.park(b, key: "up", now: Self.t0)
        #expect(pool.park(c, key: "up", now: Self.t0) === a)
        #expect(pool.count == 2)
        var none = Self.pool(limit: 0)
        #expect(none.park(a, key: "up", now: Self.t0) === a, "a limit of 0 keeps nothing")
        #expect(none.count == 0)
    }

    @Test func aConnectionTheUpstreamClosedIsForgotten() {
        var pool = Self.pool()
        let a = Connection("a"), b = Connection("b")
        _ = pool.park(a, key: "up", now: Self.t0)
        _ = pool.park(b, key: "up", now: Self.t0)
        let removed = pool.remove(a, key: "up")
        let removedAgain = pool.remove(a, key: "up")
        #expect(removed && !removedAgain)
        #expect(pool.take("up") === b)
        #expect(pool.take("up") == nil)
    }

    @Test func connectionsIdleForTheTimeoutExpireOldestFirst() {
        var pool = Self.pool()
        let a = Connection("a"), b = Connection("b"), c = Connection("c")
        #expect(pool.nextExpiry == nil)
        _ = pool.park(a, key: "up", now: Self.t0)
        _ = pool.park(c, key: "elsewhere", now: Self.at(5))
        _ = pool.park(b, key: "up", now: Self.at(10))
        #expect(pool.nextExpiry == Self.at(30))
        let early = pool.expire(now: Self.at(29))
        #expect(early.isEmpty)
        let first = pool.expire(now: Self.at(30))
        #expect(first.map(\.name) == ["a"])
        #expect(pool.nextExpiry == Self.at(35))
        let rest = pool.expire(now: Self.at(40))
        #expect(Set(rest.map(\.name)) == ["b", "c"])
        #expect(pool.count == 0 && pool.nextExpiry == nil)
    }

    @Test func overTheTotalTheOldestOfAllKeysIsClosed() {
        var pool = Self.pool(limit: 2, total: 3)
        let a = Connection("a"), b = Connection("b"), c = Connection("c"), d = Connection("d")
        _ = pool.park(a, key: "one", now: Self.t0)
        _ = pool.park(b, key: "two", now: Self.at(1))
        _ = pool.park(c, key: "three", now: Self.at(2))
        #expect(pool.park(d, key: "four", now: Self.at(3)) === a)
        #expect(pool.count == 3)
        #expect(pool.take("one") == nil)
        // Taken and parked again, b is the newest: c is the oldest now.
        #expect(pool.take("two") === b)
        #expect(pool.park(b, key: "two", now: Self.at(4)) == nil)
        #expect(pool.park(a, key: "one", now: Self.at(5)) === c)
        #expect(pool.nextExpiry == Self.at(33), "d, parked at 3, is the oldest left")
        var none = Self.pool(limit: 2, total: 0)
        #expect(none.park(a, key: "up", now: Self.t0) === a, "a total of 0 keeps nothing")
    }

    @Test func newLimitsCloseWhatIsOverThemOldestFirst() {
        var pool = Self.pool(limit: 4, total: 10)
        let connections = (0..<6).map { Connection("c\($0)") }
        for (index, connection) in connections.enumerated() {
            _ = pool.park(connection, key: index < 4 ? "busy" : "quiet", now: Self.at(index))
        }
        let closed = pool.apply(PoolLimits(perKey: 2, total: 3, idleTimeout: .seconds(10)))
        // Two of "busy" over its limit (c0, c1), then the oldest of all over the total (c2).
        #expect(closed.map(\.name) == ["c0", "c1", "c2"])
        #expect(pool.count == 3)
        #expect(pool.nextExpiry == Self.at(13), "c3 at 3 with the new timeout")
        #expect(pool.apply(PoolLimits(perKey: 0, total: 3)).count == 3, "0 per key closes them all")
        #expect(pool.count == 0 && pool.nextExpiry == nil)
    }

    /// Random takes, parks, removals and expiries against a plain list of everything
    /// parked: the queue of park events, its dead entries and its rebuilds, never change
    /// which connection goes.
    @Test func matchesAPlainListUnderRandomUse() {
        var generator = SeededGenerator(seed: 7)
        var pool = Self.pool(limit: 3, total: 8)
        var reference: [(connection: Connection, key: String, since: Int)] = []
        var now = 0
        let keys = ["a", "b", "c", "d", "e"]
        for step in 0..<20_000 {
            now += Int(generator.next() % 2)
            let key = keys[Int(generator.next() % UInt64(keys.count))]
            switch generator.next() % 10 {
            case 0..<4:
                let taken = pool.take(key)
                let expected = reference.lastIndex { $0.key == key }
                #expect(taken === expected.map { reference[$0].connection }, "step \(step)")
                if let expected { reference.remove(at: expected) }
            case 4..<8:
                let connection = Connection("\(step)")
                let closed = pool.park(connection, key: key, now: Self.at(now))
                reference.append((connection, key, now))
                var expected: Int?
                if reference.filter({ $0.key == key }).count > 3 {
                    expected = reference.firstIndex { $0.key == key }
                } else if reference.count > 8 {
                    expected = 0
                }
                #expect(closed === expected.map { reference[$0].connection }, "step \(step)")
                if let expected { reference.remove(at: expected) }
            case 8:
                guard let victim = reference.filter({ $0.key == key }).randomElement(using: &generator) else { continue }
                let removed = pool.remove(victim.connection, key: key)
                #expect(removed)
                reference.removeAll { $0.connection === victim.connection }
            default:
                let expired = pool.expire(now: Self.at(now))
                let expected = reference.filter { $0.since + 30 <= now }.map(\.connection)
                #expect(expired.map(ObjectIdentifier.init) == expected.map(ObjectIdentifier.init), "step \(step)")
                reference.removeAll { $0.since + 30 <= now }
            }
            #expect(pool.count == reference.count)
            #expect(pool.nextExpiry == reference.first.map { Self.at($0.since + 30) })
        }
    }
}

