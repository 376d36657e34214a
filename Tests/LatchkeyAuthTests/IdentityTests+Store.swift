import Foundation
import Synchronization
import Testing
@testable import LatchkeyAuth

/// The identity and its store: what it saves, what it takes from another process.
extension IdentityTests {
    @Test func requestsBeforeStartWaitForTheStoredToken() async throws {
        let source = ScriptedSource(answers: [.success(token("requested"))])
        let store = MemoryTokenStore()
        let identity = Identity(name: "test", source: source, store: store, events: RecordingEvents(), waitsForStart: true, clock: { [now] in now })
        let answered = Mutex<Result<IssuedToken, IdentityUnavailable>?>(nil)
        identity.demand { result in answered.withLock { $0 = result } }
        // No token request while the store has not been read (a request would find nothing
        // there yet, and ask the IdP).
        try await Task.sleep(for: .milliseconds(50))
        #expect(source.requests.withLock { $0.isEmpty })
        #expect(answered.withLock { $0 } == nil)
        await store.save(token("stored"), identity: "test")
        await identity.start(eagerly: false)
        #expect(answered.withLock { $0 } == .success(IssuedToken(accessToken: "stored", generation: 1)))
        #expect(source.requests.withLock { $0.isEmpty })
    }

    @Test func aTokenChangedInTheStoreIsTakenWithoutWritingItBack() async {
        let store = RecordingStore()
        let events = RecordingEvents()
        let identity = identity(ScriptedSource(answers: []), events: events, store: store, initial: token("a"))
        identity.storeChanged(.stored(token("b")))
        #expect(identity.current() == IssuedToken(accessToken: "b", generation: 2))
        // The same token again changes nothing.
        identity.storeChanged(.stored(token("b")))
        #expect(identity.current() == IssuedToken(accessToken: "b", generation: 2))
        #expect(await store.saved.isEmpty)
        #expect(events.kinds == [.acquired])
    }

    @Test func aTokenChangedInTheStoreAnswersTheWaitingRequests() async {
        let source = ScriptedSource(answers: [.success(token("late"))], gated: true)
        let identity = identity(source)
        let answer = await withCheckedContinuation { continuation in
            identity.demand { continuation.resume(returning: $0) }
            Task {
                while source.requests.withLock({ $0.isEmpty }) { await Task.yield() }
                identity.storeChanged(.stored(token("login")))
            }
        }
        #expect(answer == .success(IssuedToken(accessToken: "login", generation: 1)))
        source.release()
    }

    @Test func aTokenStoredWhileARequestIsOutWinsOverItsFailure() async throws {
        let source = ScriptedSource(canGrant: false, answers: [.failure(AcquisitionFailure(.rejected, "invalid_grant"))], gated: true)
        let store = RecordingStore()
        let identity = identity(source, store: store, initial: token("a", refresh: "r1"))
        identity.rejected(generation: 1) { _ in }
        while source.requests.withLock({ $0.isEmpty }) { await Task.yield() }
        identity.storeChanged(.stored(token("login", refresh: "r9")))
        source.release()
        while source.unanswered > 0 { await Task.yield() }
        // The refused refresh neither logs the identity out nor clears the new login (the
        // wait lets the request's task finish; the failure would show by then).
        try await Task.sleep(for: .milliseconds(50))
        #expect(identity.current() == IssuedToken(accessToken: "login", generation: 2))
        #expect(await store.saved.isEmpty)
    }

    @Test func anEntryRemovedFromTheStoreLogsTheIdentityOut() async {
        let store = RecordingStore()
        let events = RecordingEvents()
        let identity = identity(ScriptedSource(canGrant: false, answers: []), events: events, store: store, initial: token("a"))
        identity.storeChanged(.removed)
        #expect(identity.current() == nil)
        #expect(await demand(identity) == .failure(.loginRequired(reason: "logged out")))
        identity.storeChanged(.removed)
        #expect(events.kinds == [.loggedOut])
        #expect(await store.saved.isEmpty)
    }

    @Test func aLogoutInTheStoreHoldsEvenAnIdentityThatCouldLogInByItself() async {
        let source = ScriptedSource(canGrant: true, answers: [.success(token("silent"))])
        let events = RecordingEvents()
        let identity = identity(source, events: events, initial: token("a"))
        identity.storeChanged(.loggedOut)
        #expect(identity.current() == nil)
        #expect(await demand(identity) == .failure(.loginRequired(reason: "logged out with `latchkey logout`")))
        #expect(source.requests.withLock { $0.isEmpty })
        identity.storeChanged(.loggedOut)
        #expect(events.events.withLock { $0 } == [AuthEvent(identity: "test", kind: .loggedOut, detail: "logged out with `latchkey logout`")])
        // A login ends it.
        identity.storeChanged(.stored(token("login")))
        #expect(await demand(identity) == .success(IssuedToken(accessToken: "login", generation: 3)))
    }

    @Test func anIdentityLoggedOutInTheStoreStartsLoggedOut() async {
        let source = ScriptedSource(canGrant: true, answers: [.success(token("silent"))])
        let store = MemoryTokenStore()
        _ = await store.logOut(identity: "test")
        let identity = Identity(name: "test", source: source, store: store, events: RecordingEvents(), waitsForStart: true, clock: { [now] in now })
        await identity.start(eagerly: true)
        #expect(await demand(identity) == .failure(.loginRequired(reason: "logged out with `latchkey logout`")))
        #expect(source.requests.withLock { $0.isEmpty })
    }

    @Test func aTokenRequestFindingALogoutInTheStoreStopsThere() async {
        // Logged out by another process before the watcher has told this one: the refresh
        // token is revoked, and a new grant would undo the logout.
        let source = ScriptedSource(canGrant: true, answers: [.success(token("silent"))])
        let store = MemoryTokenStore()
        let events = RecordingEvents()
        let identity = identity(source, events: events, store: store, initial: token("a", refresh: "r1"))
        _ = await store.logOut(identity: "test")
        let result = await withCheckedContinuation { continuation in
            identity.rejected(generation: 1) { continuation.resume(returning: $0) }
        }
        #expect(result == .failure(.loginRequired(reason: "logged out with `latchkey logout`")))
        #expect(source.requests.withLock { $0.isEmpty })
        #expect(events.kinds == [.loggedOut])
        #expect(await store.isLoggedOut(identity: "test"))
    }

    @Test func anUnreadableStoreIsReportedAndTheTokenKept() {
        let events = RecordingEvents()
        let identity = identity(ScriptedSource(answers: []), events: events, initial: token("a"))
        identity.storeChanged(.unreadable("store file x does not open with the store key"))
        #expect(identity.current() == IssuedToken(accessToken: "a", generation: 1))
        #expect(events.events.withLock { $0 } == [AuthEvent(identity: "test", kind: .failed,
            detail: "the token store changed but cannot be read: store file x does not open with the store key")])
    }

    @Test func theWinnerTakesANewerStoredTokenInsteadOfRequestingOne() async throws {
        let source = ScriptedSource(answers: [.success(token("requested"))])
        let store = MemoryTokenStore()
        let identity = identity(source, store: store, initial: token("a", refresh: "r1"))
        // Another process (a login, another replica) stored a newer token meanwhile.
        await store.save(TokenSet(accessToken: "b", refreshToken: "r2", expiresAt: now.addingTimeInterval(3600), obtainedAt: now.addingTimeInterval(1)), identity: "test")
        let result = await withCheckedContinuation { continuation in
            identity.rejected(generation: 1) { continuation.resume(returning: $0) }
        }
        #expect(result == .success(IssuedToken(accessToken: "b", generation: 2)))
        #expect(source.requests.withLock { $0.isEmpty })
    }

    @Test func theStoredTokenItselfIsNotTakenAgain() async throws {
        let source = ScriptedSource(answers: [.success(token("b", refresh: "r2"))])
        let store = MemoryTokenStore()
        await store.save(token("a", refresh: "r1"), identity: "test")
        let identity = identity(source, store: store, initial: token("a", refresh: "r1"))
        let result = await withCheckedContinuation { continuation in
            identity.rejected(generation: 1) { continuation.resume(returning: $0) }
        }
        #expect(result == .success(IssuedToken(accessToken: "b", generation: 2)))
        #expect(source.requests.withLock { $0.map(\.1) } == ["r1"])
    }

    @Test func aRefreshAnswerWithoutARefreshTokenIsStoredWithTheOldOne() async {
        let source = ScriptedSource(answers: [.success(token("b", refresh: nil))])
        let store = RecordingStore()
        let identity = identity(source, store: store, initial: token("a", refresh: "r1"))
        _ = await withCheckedContinuation { continuation in
            identity.rejected(generation: 1) { continuation.resume(returning: $0) }
        }
        // RFC 6749 §6: the old refresh token stays, and a restart must find it.
        #expect(await store.saved == [token("b", refresh: "r1")])
    }
}
