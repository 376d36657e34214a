import LatchkeyLoop
import LatchkeyTLS

/// Which failed TLS handshakes get a line in the log: the first of each client address and
/// reason in ten minutes. A client that does not trust the certificate fails every
/// connection it opens, and a scanner fails them all: the log says so once, the metric
/// counts every one. At most `capacity` pairs are remembered; while that many were logged
/// in the last ten minutes, failures of further pairs are not logged (the log stays
/// bounded however many addresses a flood comes from).
struct TLSFailureLogThrottle: Sendable {
    static let interval = Duration.seconds(600)
    static let capacity = 1024

    private struct Key: Hashable {
        let client: String
        let reason: TLSHandshakeFailure.Reason
    }

    /// When each pair was last logged.
    private var loggedAt: [Key: LoopInstant] = [:]
    /// No entry is older: until this one is `interval` old, a full table has none to drop.
    private var oldest: LoopInstant?

    /// Whether to log this failure now; if so, it is remembered as logged.
    mutating func shouldLog(client: String, reason: TLSHandshakeFailure.Reason, now: LoopInstant) -> Bool {
        let key = Key(client: client, reason: reason)
        if let last = loggedAt[key] {
            guard now.since(last) >= Self.interval else { return false }
        } else if loggedAt.count >= Self.capacity {
            guard let oldest, now.since(oldest) >= Self.interval else { return false }
            loggedAt = loggedAt.filter { now.since($0.value) < Self.interval }
            self.oldest = loggedAt.values.min()
        }
        loggedAt[key] = now
        oldest = min(oldest ?? now, now)
        return true
    }
}
