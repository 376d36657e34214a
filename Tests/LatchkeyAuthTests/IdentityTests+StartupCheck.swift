import Foundation
import Testing
@testable import LatchkeyAuth

/// A restored token checked with the server at start, as Auth0's SDKs do.
extension IdentityTests {
    /// Starts an identity whose store holds `stored`, with a request already waiting, and
    /// returns what that request got.
    func startWithWaitingRequest(_ source: ScriptedSource, stored: TokenSet, events: RecordingEvents = RecordingEvents())
        async -> Result<IssuedToken, IdentityUnavailable>
    {
        let store = MemoryTokenStore()
        await store.save(stored, identity: "test")
        let identity = Identity(name: "test", source: source, store: store, events: events, waitsForStart: true, clock: { [now] in now })
        async let answer = demand(identity)
        await identity.start(eagerly: false)
        return await answer
    }

    @Test func aStoredTokenTheServerNoLongerAcceptsIsRenewedBeforeAnyRequestCarriesIt() async {
        let source = ScriptedSource(answers: [.success(token("renewed", refresh: "r2"))], verdict: .success(.invalid))
        let events = RecordingEvents()
        let answer = await startWithWaitingRequest(source, stored: token("revoked", refresh: "r1"), events: events)
        #expect(answer == .success(IssuedToken(accessToken: "renewed", generation: 2)))
        #expect(source.checked.withLock { $0 } == ["revoked"])
        #expect(source.requests.withLock { $0.map(\.0) } == [.refresh])
        #expect(source.requests.withLock { $0.map(\.1) } == ["r1"])
        #expect(events.kinds == [.failed, .refreshed])
    }

    @Test func aStoredTokenTheServerAcceptsIsUsedWithoutATokenRequest() async {
        let source = ScriptedSource(answers: [], verdict: .success(.valid))
        let answer = await startWithWaitingRequest(source, stored: token("kept"))
        #expect(answer == .success(IssuedToken(accessToken: "kept", generation: 1)))
        #expect(source.checked.withLock { $0 } == ["kept"])
        #expect(source.requests.withLock { $0.isEmpty })
    }

    @Test func aServerThatCannotAnswerTheCheckLeavesTheStoredTokenInUse() async {
        let source = ScriptedSource(answers: [], verdict: .failure(AcquisitionFailure(.transient, "userinfo answered 503")))
        let events = RecordingEvents()
        let answer = await startWithWaitingRequest(source, stored: token("kept"), events: events)
        #expect(answer == .success(IssuedToken(accessToken: "kept", generation: 1)))
        #expect(source.requests.withLock { $0.isEmpty })
        #expect(events.events.withLock { $0.map(\.detail) } == ["cannot check the stored token, using it: userinfo answered 503"])
    }

    @Test func anExpiredStoredTokenIsRenewedWithoutAskingTheServerAboutIt() async {
        let source = ScriptedSource(answers: [.success(token("renewed"))], verdict: .success(.valid))
        var expired = token("old")
        expired.expiresAt = now.addingTimeInterval(-60)
        let answer = await startWithWaitingRequest(source, stored: expired)
        #expect(answer == .success(IssuedToken(accessToken: "renewed", generation: 2)))
        #expect(source.checked.withLock { $0.isEmpty })
    }
}
