import Foundation
import LatchkeyConfig
import Testing
@testable import LatchkeyAuth

@Suite struct TokenTimingTests {
    let start = Date(timeIntervalSince1970: 1_000_000)

    func token(lifetime: TimeInterval?) -> TokenSet {
        TokenSet(accessToken: "a", expiresAt: lifetime.map { start.addingTimeInterval($0) }, obtainedAt: start)
    }

    @Test func longLivedTokensStopAtTheSkewAndRefreshAheadOfIt() {
        let timing = TokenTiming(clockSkew: .seconds(30), refreshAhead: .seconds(60))
        #expect(timing.usableUntil(token(lifetime: 3600)) == start.addingTimeInterval(3570))
        #expect(timing.refreshAt(token(lifetime: 3600)) == start.addingTimeInterval(3510))
    }

    @Test func shortLivedTokensKeepHalfTheirLifeAndRefreshInTheLastQuarterOfIt() {
        let timing = TokenTiming(clockSkew: .seconds(30), refreshAhead: .seconds(60))
        #expect(timing.usableUntil(token(lifetime: 4)) == start.addingTimeInterval(2))
        #expect(timing.refreshAt(token(lifetime: 4)) == start.addingTimeInterval(1.5))
    }

    @Test func noExpiryMeansNoDeadlineAndZeroAheadMeansNoProactiveRefresh() {
        #expect(TokenTiming().usableUntil(token(lifetime: nil)) == nil)
        #expect(TokenTiming().refreshAt(token(lifetime: nil)) == nil)
        #expect(TokenTiming(refreshAhead: .zero).refreshAt(token(lifetime: 3600)) == nil)
    }
}

@Suite struct BackoffTests {
    let backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))

    @Test func doublesWithJitterInTheUpperHalfUpToTheCap() {
        #expect(backoff.delay(afterFailures: 1, retryAfter: nil, unit: 0) == .milliseconds(500))
        #expect(backoff.delay(afterFailures: 1, retryAfter: nil, unit: 0.999_999) <= .seconds(1))
        #expect(backoff.delay(afterFailures: 4, retryAfter: nil, unit: 0) == .seconds(4))
        #expect(backoff.delay(afterFailures: 40, retryAfter: nil, unit: 0.5) == .seconds(45))
    }

    @Test func honoursRetryAfterButNotWithoutBound() {
        #expect(backoff.delay(afterFailures: 1, retryAfter: .seconds(20), unit: 0) == .seconds(20))
        #expect(backoff.delay(afterFailures: 1, retryAfter: .seconds(100_000), unit: 0) == .seconds(240))
    }
}
