/// How many idle connections a loop's pool keeps, and for how long.
public struct PoolLimits: Sendable, Equatable {
    /// Idle connections kept per upstream (`ConnectionKey`); 0 keeps none.
    public var perKey: Int
    /// Idle connections kept for all upstreams together.
    public var total: Int
    /// An idle connection is closed after this long. Shorter than most servers' own (nginx
    /// 75 s; Apache's 5 s is the exception the resend covers).
    public var idleTimeout: Duration

    public init(perKey: Int = 32, total: Int = 512, idleTimeout: Duration = .seconds(30)) {
        self.perKey = perKey
        self.total = total
        self.idleTimeout = idleTimeout
    }
}
