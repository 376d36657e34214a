/// When a token stops being used and when it is renewed ahead of that (`clock_skew`,
/// `refresh_ahead`). The moments themselves are worked out by LatchkeyAuth, which knows
/// tokens.
public struct TokenTiming: Sendable, Equatable {
    /// Margin against clocks that disagree with the IdP's: a token is treated as expired
    /// this long before its `expiresAt` (at most half its lifetime, so that short-lived
    /// tokens stay usable).
    public var clockSkew: Duration
    /// How long before that point a background refresh starts, so that requests never wait
    /// for one (at most a quarter of the usable lifetime). `.zero` turns proactive refresh
    /// off: the token is then renewed when a request needs it or an upstream rejects it.
    public var refreshAhead: Duration

    public init(clockSkew: Duration = .seconds(30), refreshAhead: Duration = .seconds(60)) {
        self.clockSkew = clockSkew
        self.refreshAhead = refreshAhead
    }
}
