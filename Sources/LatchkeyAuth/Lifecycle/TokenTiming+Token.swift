#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig

extension TokenTiming {
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
