import Foundation
import LatchkeyConfig
import Synchronization
import Testing
@testable import LatchkeyAuth

/// The refresh timer runs on the identity's clock: the test moves it on, nothing waits.
extension IdentityTests {
    func identity(_ source: any TokenSource, on clock: ManualClock, initial: TokenSet?) -> Identity {
        Identity(name: "test", source: source, store: MemoryTokenStore(), events: RecordingEvents(), initialToken: initial,
                 timing: TokenTiming(clockSkew: .seconds(10), refreshAhead: .seconds(20)), clock: { clock.now },
                 sleep: { try await clock.sleep(until: $0) })
    }

    /// Polls until `condition` holds, letting the identity's tasks run (the cooperative
    /// pool has two threads here: a loop of bare yields would starve them); the clock does
    /// not move meanwhile. Records an issue after about 5 s.
    func settle(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
        for _ in 0..<5000 {
            if condition() { return }
            try? await Task.sleep(for: .milliseconds(1))
        }
        Issue.record("the condition never held", sourceLocation: sourceLocation)
    }

    @Test func theProactiveRefreshFiresWhenTheClockReachesItsMoment() async {
        let clock = ManualClock(now)
        // Usable until +90 s (10 s of skew before its expiry), refreshed 20 s before: at +70 s.
        let held = TokenSet(accessToken: "a", refreshToken: "r", expiresAt: now.addingTimeInterval(100), obtainedAt: now)
        let source = ScriptedSource(answers: [.success(token("b"))])
        let identity = identity(source, on: clock, initial: held)
        await identity.start(eagerly: false)
        #expect(identity.current() == IssuedToken(accessToken: "a", generation: 1))
        await settle { clock.sleepers == 1 }
        clock.advance(by: 69)
        #expect(clock.sleepers == 1)
        #expect(source.requests.withLock { $0.isEmpty })
        clock.advance(by: 1)
        await settle { identity.snapshot.generation == 2 }
        #expect(source.requests.withLock { $0.map(\.0) } == [.refresh])
        #expect(identity.current() == IssuedToken(accessToken: "b", generation: 2))
    }

    @Test func aBackOffEndsWhenTheClockReachesIt() async {
        let clock = ManualClock(now)
        let source = ScriptedSource(answers: [.failure(AcquisitionFailure(.transient, "down")), .success(token("b"))])
        let identity = Identity(name: "test", source: source, store: MemoryTokenStore(), events: RecordingEvents(),
                                backoff: Backoff(initial: .seconds(2), maximum: .seconds(60)),
                                clock: { clock.now }, sleep: { try await clock.sleep(until: $0) }, random: { 1 })
        await identity.start(eagerly: true)
        await settle { clock.sleepers == 1 }
        guard case .failure(.failing(_, let retryAt)) = await demand(identity) else {
            Issue.record("a request during the back-off is answered at once")
            return
        }
        #expect(retryAt == now.addingTimeInterval(2))
        clock.advance(by: 2)
        await settle { clock.sleepers == 0 && identity.snapshot.phase == .idle }
        #expect(await demand(identity) == .success(IssuedToken(accessToken: "b", generation: 1)))
        #expect(source.requests.withLock { $0.count } == 2)
    }
}
