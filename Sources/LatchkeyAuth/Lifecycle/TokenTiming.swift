#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When a token stops being used and when it is renewed ahead of that.
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

    /// The last moment `token` is handed to requests; nil when it has no known expiry.
    public func usableUntil(_ token: TokenSet) -> Date? {
        guard let expiresAt = token.expiresAt else { return nil }
        let lifetime = max(0, expiresAt.timeIntervalSince(token.obtainedAt))
        return expiresAt.addingTimeInterval(-min(clockSkew.seconds, lifetime / 2))
    }

    /// When the background refresh of `token` is due; nil when it never is.
    public func refreshAt(_ token: TokenSet) -> Date? {
        guard refreshAhead > .zero, let usableUntil = usableUntil(token) else { return nil }
        let usable = max(0, usableUntil.timeIntervalSince(token.obtainedAt))
        return usableUntil.addingTimeInterval(-min(refreshAhead.seconds, usable / 4))
    }
}

extension Duration {
    /// The duration in seconds, as `TimeInterval` arithmetic on `Date` wants it.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
