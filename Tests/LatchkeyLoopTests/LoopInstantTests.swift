import LatchkeyLoop
import Testing

@Suite struct DurationNanosecondsTests {
    /// The same whole nanoseconds as the definition by `components`, on both sides of the
    /// 64-bit shortcut's limit (2^73 attoseconds).
    @Test func matchesTheDefinitionByComponents() {
        var durations: [Duration] = [.zero, .nanoseconds(1), .nanoseconds(999), .milliseconds(1), .seconds(1), .seconds(60),
                                     .seconds(9_444), .seconds(9_445), .seconds(86_400 * 365), .seconds(Int64.max / 2)]
        durations += [Duration(attoseconds: 1), Duration(attoseconds: 999_999_999), Duration(attoseconds: (1 << 73) - 1),
                      Duration(attoseconds: 1 << 73), Duration(attoseconds: (1 << 73) + 999_999_999)]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<1000 { durations.append(Duration(attoseconds: Int128(random.next() as UInt64) << Int128(random.next() % 12))) }
        for duration in durations {
            let (seconds, attoseconds) = duration.components
            let expected = UInt64(clamping: Int128(seconds) * 1_000_000_000 + Int128(attoseconds / 1_000_000_000))
            #expect(duration.nanosecondsClamped == expected, "\(duration)")
        }
    }

    @Test func negativeIsZeroAndHugeIsClamped() {
        #expect(Duration.seconds(-1).nanosecondsClamped == 0)
        #expect(Duration(attoseconds: -1).nanosecondsClamped == 0)
        #expect(Duration.seconds(Int64.max).nanosecondsClamped == UInt64.max)
    }
}
