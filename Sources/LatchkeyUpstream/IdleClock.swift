import LatchkeyLoop

/// An upstream exchange's idle timeout, one for either kind of transfer: the time since the
/// upstream last showed a sign of life, not counting the time Latchkey itself holds the
/// exchange (waiting for the client's body, for the client to drain the answer, or for a
/// first byte, which the first-byte timeout judges instead).
struct IdleClock {
    /// The upstream's last sign of life, or our last reason to wait on it.
    private var lastActivity: LoopInstant
    let timeout: Duration

    static let expired = UpstreamError(.idleTimeout, detail: "upstream idle for longer than the idle timeout")

    init(timeout: Duration, now: LoopInstant) {
        self.timeout = timeout
        lastActivity = now
    }

    mutating func activity(at now: LoopInstant) {
        lastActivity = now
    }

    /// The idle timer fired at `now`; `heldByUs`: Latchkey is the one holding the exchange.
    /// Returns when to look again, or nil when the upstream has been idle too long.
    mutating func nextDeadline(firedAt now: LoopInstant, heldByUs: Bool) -> LoopInstant? {
        if heldByUs { lastActivity = now }
        let deadline = lastActivity.advanced(by: timeout)
        return deadline > now ? deadline : nil
    }
}
