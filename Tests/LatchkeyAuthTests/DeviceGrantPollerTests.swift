import Foundation
import Synchronization
import Testing
@testable import LatchkeyAuth

/// RFC 8628 §3.5 polling with a manual clock: a sleep moves the clock, nothing waits.
@Suite struct DeviceGrantPollerTests {
    private let issuedAt = Date(timeIntervalSince1970: 1_700_000_000)
    private let token = TokenSet(accessToken: "at", refreshToken: "rt", obtainedAt: Date(timeIntervalSince1970: 1_700_000_000))

    /// The clock, the sleeps and a scripted token endpoint, whose answers are taken in turn.
    private final class Script: Sendable {
        private struct State {
            var now: Date
            var sleeps: [Duration] = []
            var pollTimes: [TimeInterval] = []
            var answers: [Result<TokenSet, TokenEndpointError>]
        }

        private let state: Mutex<State>
        private let start: Date

        init(start: Date, answers: [Result<TokenSet, TokenEndpointError>]) {
            self.start = start
            state = Mutex(State(now: start, answers: answers))
        }

        var sleeps: [Duration] { state.withLock { $0.sleeps } }
        /// Seconds after the start at which each poll was made.
        var pollTimes: [TimeInterval] { state.withLock { $0.pollTimes } }

        func now() -> Date { state.withLock { $0.now } }

        func sleep(_ duration: Duration) {
            state.withLock {
                $0.now = $0.now.addingTimeInterval(duration.seconds)
                $0.sleeps.append(duration)
            }
        }

        func redeem(_ deviceCode: String) throws(TokenEndpointError) -> TokenSet {
            precondition(deviceCode == "dev-code")
            let answer = state.withLock { state in
                state.pollTimes.append(state.now.timeIntervalSince(start))
                return state.answers.isEmpty ? .failure(.oauth(OAuthError(error: "script_ended", status: 400))) : state.answers.removeFirst()
            }
            return try answer.get()
        }
    }

    private func poll(
        _ answers: [Result<TokenSet, TokenEndpointError>], interval: Duration = .seconds(5), expiresIn: Duration = .seconds(600)
    ) async -> (Result<TokenSet, LoginError>, Script) {
        let script = Script(start: issuedAt, answers: answers)
        let authorization = DeviceAuthorization(deviceCode: "dev-code", userCode: "WDJB-MJHT", verificationURI: "https://idp.example/device",
                                                expiresIn: expiresIn, interval: interval)
        let poller = DeviceGrantPoller(authorization: authorization, issuedAt: issuedAt, now: script.now, sleep: { script.sleep($0) })
        do {
            return (.success(try await poller.poll { code throws(TokenEndpointError) in try script.redeem(code) }), script)
        } catch {
            return (.failure(error), script)
        }
    }

    private static func oauth(_ error: String, _ description: String? = nil, status: Int = 400) -> Result<TokenSet, TokenEndpointError> {
        .failure(.oauth(OAuthError(error: error, errorDescription: description, status: status)))
    }

    @Test func pendingPollsAtTheIntervalUntilApproved() async throws {
        let (result, script) = await poll([Self.oauth("authorization_pending"), Self.oauth("authorization_pending"), .success(token)])
        #expect(try result.get() == token)
        #expect(script.sleeps == [.seconds(5), .seconds(5), .seconds(5)])
        #expect(script.pollTimes == [5, 10, 15])
    }

    /// §3.5: slow_down adds 5 seconds for this and every later poll.
    @Test func slowDownRaisesTheIntervalForGood() async throws {
        let (result, script) = await poll(
            [Self.oauth("authorization_pending"), Self.oauth("slow_down"), Self.oauth("authorization_pending"),
             Self.oauth("slow_down"), .success(token)],
            interval: .seconds(1))
        #expect(try result.get() == token)
        #expect(script.sleeps == [.seconds(1), .seconds(1), .seconds(6), .seconds(6), .seconds(11)])
    }

    @Test func expiredTokenEndsTheLogin() async {
        let (result, script) = await poll([Self.oauth("authorization_pending"), Self.oauth("expired_token")])
        #expect(throws: LoginError.deviceCodeExpired) { try result.get() }
        #expect(script.pollTimes.count == 2)
    }

    @Test func accessDeniedEndsTheLogin() async {
        let (result, _) = await poll([Self.oauth("access_denied", "The user declined")])
        #expect(throws: LoginError.refused(error: "access_denied", description: "The user declined")) { try result.get() }
    }

    /// The device code's own lifetime ends the polling, even if the server keeps saying
    /// pending: no poll is made that could only be answered after it.
    @Test func theCodesLifetimeEndsThePolling() async {
        let (result, script) = await poll(Array(repeating: Self.oauth("authorization_pending"), count: 10),
                                          interval: .seconds(4), expiresIn: .seconds(10))
        #expect(throws: LoginError.deviceCodeExpired) { try result.get() }
        #expect(script.pollTimes == [4, 8])
    }

    /// §3.5: a server that cannot be reached is polled less often; other errors are final.
    @Test func unreachableServerIsPolledLessOften() async throws {
        let unavailable = Result<TokenSet, TokenEndpointError>.failure(.unexpectedStatus(status: 503, mediaType: "text/html", retryAfter: nil))
        let (result, script) = await poll([unavailable, unavailable, Self.oauth("authorization_pending"), .success(token)],
                                          interval: .seconds(20))
        #expect(try result.get() == token)
        #expect(script.sleeps == [.seconds(20), .seconds(40), .seconds(60), .seconds(60)])
    }

    @Test func anotherErrorEndsTheLoginWithTheServersWords() async {
        let (result, _) = await poll([Self.oauth("invalid_client", "unknown client", status: 401)])
        let error = #expect(throws: LoginError.self) { try result.get() }
        #expect(error?.message == "the authorization server refused the request with invalid_client (HTTP 401): unknown client")
    }

    @Test func aCancelledSleepIsACancelledLogin() async {
        let authorization = DeviceAuthorization(deviceCode: "dev-code", userCode: "U", verificationURI: "https://idp.example/device",
                                                expiresIn: .seconds(600), interval: .seconds(5))
        let poller = DeviceGrantPoller(authorization: authorization, issuedAt: issuedAt, now: { [issuedAt] in issuedAt },
                                       sleep: { _ in throw CancellationError() })
        await #expect(throws: LoginError.cancelled) {
            try await poller.poll { _ throws(TokenEndpointError) in Issue.record("polled after cancellation"); return token }
        }
    }
}
