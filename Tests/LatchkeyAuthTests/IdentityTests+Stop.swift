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

/// A token endpoint that answers only when its request's task is cancelled.
final class HangingSource: TokenSource {
    let canGrant = true
    let renewable = true
    let cancelled = Mutex(0)

    func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
        try? await Task.sleep(for: .seconds(3600))
        cancelled.withLock { $0 += 1 }
        throw AcquisitionFailure(.transient, "cancelled")
    }

    func check(_ token: TokenSet, now: Date) async throws(AcquisitionFailure) -> TokenValidity? { nil }
}

/// The process stops: what the identity started ends with it.
extension IdentityTests {
    @Test func shuttingDownCancelsTheTokenRequestInFlightAndAnswersItsWaiters() async {
        let source = HangingSource()
        let identity = Identity(name: "test", source: source, store: MemoryTokenStore(), events: RecordingEvents(), clock: { [now] in now })
        let answered = Mutex<Result<IssuedToken, IdentityUnavailable>?>(nil)
        identity.demand { result in answered.withLock { $0 = result } }
        #expect(identity.runningTasks == 1)
        identity.shutDown()
        #expect(answered.withLock { $0 } == .failure(Identity.shutDownReason))
        #expect(identity.runningTasks == 0)
        await settle { source.cancelled.withLock { $0 } == 1 }
        // Nothing starts any more.
        #expect(await demand(identity) == .failure(Identity.shutDownReason))
        #expect(identity.runningTasks == 0)
    }

    @Test func aStartInTheBackgroundIsOwnedByTheIdentity() async {
        let identity = Identity(name: "test", source: ScriptedSource(answers: []), store: MemoryTokenStore(), events: RecordingEvents(),
                                waitsForStart: true, clock: { [now] in now })
        identity.shutDown()
        identity.startInBackground(eagerly: true)
        #expect(identity.runningTasks == 0)
        #expect(!identity.hasStarted)
    }
}
