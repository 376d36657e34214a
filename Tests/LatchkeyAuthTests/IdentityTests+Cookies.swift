import Foundation
import LatchkeyUpstream
import Synchronization
import Testing
@testable import LatchkeyAuth

/// The cookie jar an identity keeps for `jar: proxy`: restored at start, saved when it
/// changes, cleared by a logout.
extension IdentityTests {
    static let sessionCookie = "app.example\tFALSE\t/\tFALSE\t0\tsession\tabc"

    private func jarIdentity(store: any TokenStore) throws -> (Identity, CookieJar) {
        precondition(curlReady)
        let jar = try CookieJar()
        let identity = Identity(name: "test", source: ScriptedSource(answers: []), store: store, events: RecordingEvents(),
                                initialToken: token("a"), waitsForStart: true, cookieJar: jar, clock: { [now] in now })
        return (identity, jar)
    }

    /// Polls the store until `predicate` holds for its cookies, for at most two seconds.
    private func storedCookies(_ store: MemoryTokenStore, until predicate: ([String]) -> Bool) async throws -> [String] {
        for _ in 0..<200 {
            let cookies = await store.loadCookies(identity: "test")
            if predicate(cookies) { return cookies }
            try await Task.sleep(for: .milliseconds(10))
        }
        return await store.loadCookies(identity: "test")
    }

    @Test func theJarIsRestoredAtStartAndSavedWhenItChanges() async throws {
        let store = MemoryTokenStore()
        await store.saveCookies([Self.sessionCookie], identity: "test")
        let (identity, jar) = try jarIdentity(store: store)
        await identity.start(eagerly: false)
        #expect(jar.lines() == [Self.sessionCookie])

        jar.restore(["app.example\tFALSE\t/\tFALSE\t0\tpref\t1"])
        identity.cookiesChanged()
        identity.cookiesChanged()  // a change during the save is saved after it
        let saved = try await storedCookies(store) { $0.count == 2 }
        #expect(Set(saved) == Set(jar.lines()))
    }

    @Test func requestsBeforeStartWaitForTheJarEvenWithATokenAtHand() async throws {
        let store = MemoryTokenStore()
        await store.saveCookies([Self.sessionCookie], identity: "test")
        let (identity, jar) = try jarIdentity(store: store)
        #expect(identity.current() == nil)
        let cookiesWhenAnswered = Mutex<[String]?>(nil)
        identity.demand { _ in cookiesWhenAnswered.withLock { $0 = jar.lines() } }
        #expect(cookiesWhenAnswered.withLock { $0 } == nil)
        await identity.start(eagerly: false)
        #expect(cookiesWhenAnswered.withLock { $0 } == [Self.sessionCookie])
        #expect(identity.current() == IssuedToken(accessToken: "a", generation: 1))
    }

    @Test func aLogoutMarkClearsTheStoredCookiesAndTheRunningJar() async throws {
        let store = MemoryTokenStore()
        await store.saveCookies([Self.sessionCookie], identity: "test")
        let (identity, jar) = try jarIdentity(store: store)
        await identity.start(eagerly: false)
        #expect(jar.lines() == [Self.sessionCookie])
        // `latchkey logout` in another process: the mark in the store, then the change the
        // running server's watcher reports.
        _ = await store.logOut(identity: "test")
        identity.storeChanged(.loggedOut)
        #expect(jar.lines().isEmpty)
        #expect(await store.loadCookies(identity: "test").isEmpty)
    }

    @Test func anIdentityStartingLoggedOutHasAnEmptyJar() async throws {
        let store = MemoryTokenStore()
        await store.saveCookies([Self.sessionCookie], identity: "test")
        _ = await store.logOut(identity: "test")
        let (identity, jar) = try jarIdentity(store: store)
        jar.restore([Self.sessionCookie])
        await identity.start(eagerly: false)
        #expect(jar.lines().isEmpty)
    }

    @Test func aLogoutByAnotherProcessEndsTheWebSessionToo() async throws {
        let (identity, jar) = try jarIdentity(store: MemoryTokenStore())
        jar.restore([Self.sessionCookie])
        identity.storeChanged(.removed)
        #expect(jar.lines().isEmpty)
    }
}
