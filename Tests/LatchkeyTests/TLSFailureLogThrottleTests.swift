import LatchkeyLoop
import LatchkeyTLS
import Testing
@testable import Latchkey

@Suite struct TLSFailureLogThrottleTests {
    private let start = LoopInstant(nanoseconds: 1_000_000_000_000)

    private func at(minutes: Int, seconds: Int = 0) -> LoopInstant {
        start.advanced(by: .seconds(minutes * 60 + seconds))
    }

    @Test func eachClientAndReasonIsLoggedOnceInTenMinutes() {
        var throttle = TLSFailureLogThrottle()
        let events: [(String, TLSHandshakeFailure.Reason, LoopInstant, Bool)] = [
            ("10.0.0.1", .certificateRefused, at(minutes: 0), true),
            ("10.0.0.1", .certificateRefused, at(minutes: 1), false),
            ("10.0.0.1", .certificateRefused, at(minutes: 9, seconds: 59), false),
            // Another reason, another client: each has its own ten minutes.
            ("10.0.0.1", .timeout, at(minutes: 1), true),
            ("10.0.0.2", .certificateRefused, at(minutes: 1), true),
            ("10.0.0.1", .certificateRefused, at(minutes: 10), true),
            ("10.0.0.1", .certificateRefused, at(minutes: 19), false),
        ]
        for (client, reason, now, logged) in events {
            #expect(throttle.shouldLog(client: client, reason: reason, now: now) == logged, "\(client) \(reason) \(now)")
        }
    }

    @Test func aFullTableLogsNoNewPairUntilItsOldestExpires() {
        var throttle = TLSFailureLogThrottle()
        var logged: [Bool] = []
        for index in 0..<TLSFailureLogThrottle.capacity {
            logged.append(throttle.shouldLog(client: "client-\(index)", reason: .plainHTTP, now: at(minutes: index < 10 ? 0 : 5)))
        }
        #expect(logged.allSatisfy { $0 })
        let full = throttle.shouldLog(client: "newcomer", reason: .plainHTTP, now: at(minutes: 9))
        #expect(!full)
        // The first ten are ten minutes old: room for ten new pairs; the others stay remembered.
        var later: [Bool] = []
        for index in 0..<10 {
            later.append(throttle.shouldLog(client: "late-\(index)", reason: .plainHTTP, now: at(minutes: 10)))
        }
        #expect(later.allSatisfy { $0 })
        let remembered = throttle.shouldLog(client: "client-500", reason: .plainHTTP, now: at(minutes: 10))
        let oneTooMany = throttle.shouldLog(client: "one-too-many", reason: .plainHTTP, now: at(minutes: 10))
        #expect(!remembered && !oneTooMany)
    }
}
