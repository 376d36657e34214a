import Foundation
import Synchronization
import Testing
@testable import Latchkey
import LatchkeyAuth

@Suite("Readiness")
struct ReadinessTests {
    /// A token source that is never asked: the identities here only start.
    struct IdleSource: TokenSource {
        let canGrant = true
        let renewable = true
        func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
            throw AcquisitionFailure(.transient, "not asked in these tests")
        }
    }

    struct NoEvents: AuthEventSink {
        func record(_ event: AuthEvent) {}
    }

    /// A store whose server is away, or not.
    final class SwitchableStore: AvailabilityReportingStore {
        let memory = MemoryTokenStore()
        let state = Mutex(StoreAvailability.available)
        var availability: StoreAvailability { state.withLock { $0 } }
        func observeAvailability(_ observer: @escaping @Sendable (StoreAvailability) -> Void) { observer(availability) }
        func load(identity: String) async throws -> TokenSet? { await memory.load(identity: identity) }
        func save(_ token: TokenSet?, identity: String) async throws { await memory.save(token, identity: identity) }
        func acquireRefreshLock(identity: String) async throws -> RefreshLockAttempt { try await memory.acquireRefreshLock(identity: identity) }
        func releaseRefreshLock(_ lease: RefreshLease) async { await memory.releaseRefreshLock(lease) }
        func logOut(identity: String) async throws -> TokenSet? { await memory.logOut(identity: identity) }
        func isLoggedOut(identity: String) async throws -> Bool { await memory.isLoggedOut(identity: identity) }
        func loadCookies(identity: String) async throws -> [String] { await memory.loadCookies(identity: identity) }
        func saveCookies(_ cookies: [String], identity: String) async throws { await memory.saveCookies(cookies, identity: identity) }
        func saveFailure(_ failure: FailureRecord?, identity: String) async throws { await memory.saveFailure(failure, identity: identity) }
        func loadFailure(identity: String) async throws -> FailureRecord? { await memory.loadFailure(identity: identity) }
    }

    func body(_ answer: (status: Int, body: [UInt8])) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: String] ?? [:]
    }

    @Test func notReadyUntilEveryIdentityHasReadTheStoreThenWhileTheStoreIsAway() async {
        let store = SwitchableStore()
        let identity = Identity(name: "idp", source: IdleSource(), store: store, events: NoEvents(), waitsForStart: true)
        let readiness = Readiness(store: store, identities: [identity])
        #expect(readiness.answer().status == 503)
        #expect(body(readiness.answer()) == ["status": "not_ready", "reason": "starting",
                                            "message": "identity idp is still reading the token store"])
        await identity.start(eagerly: false)
        #expect(readiness.answer().status == 200)
        #expect(body(readiness.answer()) == ["status": "ready"])
        store.state.withLock { $0 = .unavailable(reason: "cannot connect to redis://10.0.0.5:6379/0: Connection refused") }
        #expect(readiness.answer().status == 503)
        #expect(body(readiness.answer())["reason"] == "token_store_unavailable")
        // The probe answers without credentials: it names no server.
        #expect(!String(decoding: readiness.answer().body, as: UTF8.self).contains("10.0.0.5"))
    }

    @Test func aStoreThatIsAlwaysThereIsNoReasonToWait() {
        let identity = Identity(name: "idp", source: IdleSource(), store: MemoryTokenStore(), events: NoEvents())
        #expect(Readiness(store: nil, identities: [identity]).answer().status == 200)
    }
}
