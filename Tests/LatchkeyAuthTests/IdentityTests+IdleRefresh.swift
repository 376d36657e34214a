import Foundation
import LatchkeyConfig
import Testing
@testable import LatchkeyAuth

/// The glue around the background refresh of an identity nobody uses.
extension IdentityTests {
    @Test func anUnusedIdentityArmsNoRefreshAndItsFirstUseBringsOneAlong() async {
        // Due for its background refresh already, but no request has used it.
        let due = TokenSet(accessToken: "a", refreshToken: "r", expiresAt: now.addingTimeInterval(25), obtainedAt: now.addingTimeInterval(-75))
        let source = ScriptedSource(answers: [.success(token("b"))])
        let identity = Identity(name: "test", source: source, store: MemoryTokenStore(), events: RecordingEvents(), initialToken: due,
                                timing: TokenTiming(clockSkew: .seconds(10), refreshAhead: .seconds(20)), clock: { [now] in now })
        await identity.start(eagerly: false)
        #expect(identity.snapshot.nextTick() == nil)
        #expect(source.requests.withLock { $0.isEmpty })
        // The request gets the token it has, and the refresh follows in the background.
        #expect(identity.current() == IssuedToken(accessToken: "a", generation: 1))
        while identity.snapshot.generation < 2 { await Task.yield() }
        #expect(source.requests.withLock { $0.map(\.0) } == [.refresh])
        #expect(identity.current() == IssuedToken(accessToken: "b", generation: 2))
    }
}
