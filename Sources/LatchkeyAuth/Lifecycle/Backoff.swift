/// Delays between failed token requests: exponential with full jitter over the upper half
/// (so that replicas and identities that failed together do not retry in step), capped,
/// and never shorter than what the IdP asked for with `Retry-After`.
public struct Backoff: Sendable, Equatable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(300)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait after the `failures`-th failure in a row (1 for the first). `unit` is a
    /// random number in [0, 1), passed in so tests can pin it.
    public func delay(afterFailures failures: Int, retryAfter: Duration?, unit: Double) -> Duration {
        let exponent = min(max(failures - 1, 0), 30)
        let ceiling = min(initial * (1 << exponent), maximum)
        let jittered = ceiling * (0.5 + 0.5 * min(max(unit, 0), 1))
        guard let retryAfter else { return jittered }
        return max(jittered, min(retryAfter, maximum * 4))
    }
}
