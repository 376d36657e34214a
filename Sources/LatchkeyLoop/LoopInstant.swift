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
    /// Whole nanoseconds, clamped to zero for negative durations and to `UInt64.max` for
    /// longer ones. Taken several times per request (deadlines): `components` divides 128
    /// bits in software, several hundred instructions. 10^9 is 2^9 · 1,953,125, so below
    /// 2^73 attoseconds (about 2.6 hours) a shift leaves 64 bits, whose division by a
    /// constant is a multiplication.
    public var nanosecondsClamped: UInt64 {
        let attoseconds = self.attoseconds
        guard attoseconds > 0 else { return 0 }
        let shifted = attoseconds >> 9
        if shifted <= Int128(UInt64.max) { return UInt64(shifted) / 1_953_125 }
        return UInt64(clamping: attoseconds / 1_000_000_000)
    }
}
