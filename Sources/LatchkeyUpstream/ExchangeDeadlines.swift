import LatchkeyLoop

/// An exchange's first-byte and idle deadlines, kept on the one timer the exchange is
/// (`HTTP1Transfer`): the timer is armed at the earlier. A deadline dropped before it passes
/// (the first byte came) leaves the timer where it is: it fires once for nothing and is
/// armed at the other, which costs less than moving it in the loop's heap on every response.
struct ExchangeDeadlines: Equatable {
    var firstByte: LoopInstant?
    var idle: LoopInstant?

    /// Where the timer is to be armed: the earlier deadline; nil for none.
    var next: LoopInstant? {
        switch (firstByte, idle) {
        case let (first?, idle?): min(first, idle)
        case let (first?, nil): first
        case let (nil, idle?): idle
        case (nil, nil): nil
        }
    }

    /// The deadlines passed at `now`, forgotten here: the caller acts on each.
    mutating func takePassed(now: LoopInstant) -> (firstByte: Bool, idle: Bool) {
        let passed = (firstByte: firstByte.map { $0 <= now } ?? false, idle: idle.map { $0 <= now } ?? false)
        if passed.firstByte { firstByte = nil }
        if passed.idle { idle = nil }
        return passed
    }
}
