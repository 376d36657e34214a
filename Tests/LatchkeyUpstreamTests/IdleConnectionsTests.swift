import LatchkeyLoop
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

    static func pool(limit: Int = 2) -> IdleConnections<Connection, String> {
        IdleConnections(limitPerKey: limit, idleTimeout: .seconds(30))
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
        _ = pool.park(b, key: "up", now: Self.at(10))
        _ = pool.park(c, key: "elsewhere", now: Self.at(5))
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
}
