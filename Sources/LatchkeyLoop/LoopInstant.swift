#if canImport(Glibc)
import Glibc
#endif

/// A point on the monotonic clock, in nanoseconds. Cheaper than `ContinuousClock.Instant`
/// arithmetic on the hot path, and trivially comparable for the timer heap.
public struct LoopInstant: Comparable, Hashable, Sendable {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// clock_gettime(CLOCK_MONOTONIC).
    public static func now() -> LoopInstant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return LoopInstant(nanoseconds: UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec))
    }

    public static func < (a: LoopInstant, b: LoopInstant) -> Bool { a.nanoseconds < b.nanoseconds }

    public func advanced(by duration: Duration) -> LoopInstant {
        LoopInstant(nanoseconds: nanoseconds &+ duration.nanosecondsClamped)
    }

    /// Time from `earlier` to self; zero if `earlier` is later.
    public func since(_ earlier: LoopInstant) -> Duration {
        nanoseconds > earlier.nanoseconds ? .nanoseconds(Int64(nanoseconds - earlier.nanoseconds)) : .zero
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to zero for negative durations.
    public var nanosecondsClamped: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }
}
