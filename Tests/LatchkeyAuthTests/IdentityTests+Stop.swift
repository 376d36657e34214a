import Foundation
import Synchronization
import Testing
@testable import LatchkeyAuth

/// An identity a reload removed or replaced: it answers its requests and refreshes no more.
extension IdentityTests {
    static let removed = IdentityUnavailable.failing(reason: "removed by a reload", retryAt: Date(timeIntervalSince1970: 0))

    @Test func stoppingAnswersTheWaitingRequestsAndEveryLaterOne() async {
        let source = ScriptedSource(answers: [.success(token("never"))])
        let identity = Identity(name: "test", source: source, store: MemoryTokenStore(), events: RecordingEvents(), waitsForStart: true,
                                clock: { [now] in now })
        let answered = Mutex<Result<IssuedToken, IdentityUnavailable>?>(nil)
        identity.demand { result in answered.withLock { $0 = result } }
        #expect(answered.withLock { $0 } == nil)
        identity.stop(reason: Self.removed)
        #expect(answered.withLock { $0 } == .failure(Self.removed))
        #expect(await demand(identity) == .failure(Self.removed))
        let rejected = await withCheckedContinuation { continuation in
            identity.rejected(generation: 1) { continuation.resume(returning: $0) }
        }
        #expect(rejected == .failure(Self.removed))
        #expect(source.requests.withLock { $0.isEmpty })
    }

    @Test func aStoppedIdentityNoLongerRefreshesBeforeExpiry() async throws {
        let source = ScriptedSource(answers: [.success(token("refreshed"))])
        let identity = identity(source, initial: token("a"))
        identity.stop(reason: Self.removed)
        // A token past its proactive refresh time would arm the timer for now.
        let due = TokenSet(accessToken: "due", refreshToken: "r", expiresAt: now.addingTimeInterval(10), obtainedAt: now.addingTimeInterval(-3600))
        identity.storeChanged(.stored(due))
        try await Task.sleep(for: .milliseconds(100))
        #expect(source.requests.withLock { $0.isEmpty })
    }
}
