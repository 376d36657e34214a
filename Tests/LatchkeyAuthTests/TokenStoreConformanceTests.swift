import Foundation
import Testing
@testable import LatchkeyAuth

/// Every TokenStore, one suite (STYLE habit 11): what an Identity relies on, whatever
/// keeps the tokens. A new store joins by adding a case to `StoreUnderTest`.
@Suite struct TokenStoreConformanceTests {
    enum StoreUnderTest: String, CaseIterable, CustomTestStringConvertible {
        case memory
        case file
        case sealedFile
        case redis
        case sealedRedis

        var testDescription: String { rawValue }

        /// Two handles on one fresh, empty store, as two processes sharing it have (the
        /// memory store is shared within its process only: the same instance twice), and
        /// what must stay alive while they are used.
        func makePair() throws -> (first: any TokenStore, second: any TokenStore, resources: AnyObject?) {
            switch self {
            case .memory:
                let store = MemoryTokenStore()
                return (store, store, nil)
            case .file, .sealedFile:
                let directory = try TemporaryDirectory()
                let key = self == .sealedFile ? try testStoreKey() : nil
                let path = directory.appending("store")
                return (try FileTokenStore(directory: path, key: key), try FileTokenStore(directory: path, key: key), directory)
            case .redis, .sealedRedis:
                let server = try RedisServer()
                let key = self == .sealedRedis ? try testStoreKey() : nil
                let prefix = "conformance:"
                return (server.store(key: key, prefix: prefix), server.store(key: key, prefix: prefix), server)
            }
        }

        /// A fresh, empty store, and what must stay alive while it is used.
        func make() throws -> (store: any TokenStore, resources: AnyObject?) {
            let (store, _, resources) = try makePair()
            return (store, resources)
        }
    }

    static let token = TokenSet(
        accessToken: "at-1", tokenType: "Bearer", refreshToken: "rt-1", expiresAt: Date().addingTimeInterval(3600),
        scope: "read write", idToken: "id.token.jwt", obtainedAt: Date())

    /// `token` with other access and refresh tokens.
    static func token(_ accessToken: String, refresh: String = "rt-1") -> TokenSet {
        var token = token
        token.accessToken = accessToken
        token.refreshToken = refresh
        return token
    }

    /// Runs `body` with a fresh store of `kind`, keeping what it needs alive meanwhile.
    private func with(_ kind: StoreUnderTest, _ body: (any TokenStore) async throws -> Void) async throws {
        let (store, resources) = try kind.make()
        try await body(store)
        withExtendedLifetime(resources) {}
    }

    @Test(arguments: StoreUnderTest.allCases)
    func anEmptyStoreHasNoToken(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            let loaded = try await store.load(identity: "podio")
            #expect(loaded == nil)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aSavedTokenLoadsBackWithEveryField(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            try await store.save(Self.token, identity: "podio")
            expectSame(try await store.load(identity: "podio"), Self.token)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aTokenWithOnlyItsRequiredFieldsLoadsBack(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            let bare = TokenSet(accessToken: "at", tokenType: nil, obtainedAt: Date(timeIntervalSince1970: 1_700_000_000))
            try await store.save(bare, identity: "kii")
            #expect(try await store.load(identity: "kii") == bare)
        }
    }

    /// A recipe's result: its captures, no token type, no refresh token.
    static let recipeResult = TokenSet(accessToken: "sess-79", tokenType: nil, expiresAt: Date().addingTimeInterval(3600), obtainedAt: Date(),
                                       captures: ["request_token": "rt-1", "session_id": "sess-79"])

    @Test(arguments: StoreUnderTest.allCases)
    func aRecipeResultLoadsBackWithItsCaptures(_ kind: StoreUnderTest) async throws {
        try await withPair(kind) { first, second in
            try await first.save(Self.recipeResult, identity: "tmdb-user")
            expectSame(try await second.load(identity: "tmdb-user"), Self.recipeResult)
            // A logout hands them back, for the recipe's logout step.
            expectSame(try await first.logOut(identity: "tmdb-user"), Self.recipeResult)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func identitiesAreKeptApart(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            try await store.save(Self.token, identity: "alice")
            try await store.save(Self.token("at-2"), identity: "bob")
            expectSame(try await store.load(identity: "alice"), Self.token)
            expectSame(try await store.load(identity: "bob"), Self.token("at-2"))
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aLaterSaveReplacesTheEarlierOne(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            try await store.save(Self.token, identity: "podio")
            try await store.save(Self.token("at-1", refresh: "rt-2"), identity: "podio")
            expectSame(try await store.load(identity: "podio"), Self.token("at-1", refresh: "rt-2"))
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func savingNothingRemovesTheEntry(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            try await store.save(Self.token, identity: "podio")
            try await store.save(nil, identity: "podio")
            #expect(try await store.load(identity: "podio") == nil)
            // Removing what is not there is no error.
            try await store.save(nil, identity: "podio")
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aLogoutRemovesTheTokenAndLastsUntilATokenIsSaved(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            try await store.save(Self.token, identity: "podio")
            #expect(try await store.isLoggedOut(identity: "podio") == false)
            expectSame(try await store.logOut(identity: "podio"), Self.token)
            #expect(try await store.load(identity: "podio") == nil)
            #expect(try await store.isLoggedOut(identity: "podio"))
            #expect(try await store.isLoggedOut(identity: "other") == false)
            // Removing a token (a refused refresh) leaves the logout as it is.
            try await store.save(nil, identity: "podio")
            #expect(try await store.isLoggedOut(identity: "podio"))
            // A login ends it.
            try await store.save(Self.token("at-2"), identity: "podio")
            #expect(try await store.isLoggedOut(identity: "podio") == false)
            expectSame(try await store.load(identity: "podio"), Self.token("at-2"))
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func anIdentityThatNeverHadATokenCanBeLoggedOut(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            let removed = try await store.logOut(identity: "podio")
            #expect(removed == nil)
            #expect(try await store.isLoggedOut(identity: "podio"))
            #expect(try await store.load(identity: "podio") == nil)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func concurrentSavesLeaveOneOfTheTokensWhole(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            let tokens = (0..<20).map { Self.token("at-\($0)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for token in tokens { group.addTask { try await store.save(token, identity: "podio") } }
                try await group.waitForAll()
            }
            let loaded = try #require(try await store.load(identity: "podio"))
            #expect(tokens.map(\.accessToken).contains(loaded.accessToken))
        }
    }

    static let cookies = ["#HttpOnly_app.example\tFALSE\t/\tFALSE\t0\tsession\tabc", "app.example\tFALSE\t/x\tTRUE\t1900000000\tpref\t1"]

    @Test(arguments: StoreUnderTest.allCases)
    func cookiesAndTheTokenAreKeptSideBySide(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            #expect(try await store.loadCookies(identity: "basecamp").isEmpty)
            try await store.save(Self.token, identity: "basecamp")
            try await store.saveCookies(Self.cookies, identity: "basecamp")
            #expect(try await store.loadCookies(identity: "basecamp") == Self.cookies)
            expectSame(try await store.load(identity: "basecamp"), Self.token)
            #expect(try await store.loadCookies(identity: "other").isEmpty)

            // A new token keeps the cookies; a removed token (a refused refresh) too.
            try await store.save(Self.token("at-2"), identity: "basecamp")
            #expect(try await store.loadCookies(identity: "basecamp") == Self.cookies)
            try await store.save(nil, identity: "basecamp")
            #expect(try await store.loadCookies(identity: "basecamp") == Self.cookies)
            #expect(try await store.load(identity: "basecamp") == nil)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aLogoutTakesTheCookiesAndASavedJarDoesNotEndIt(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            try await store.save(Self.token, identity: "basecamp")
            try await store.saveCookies(Self.cookies, identity: "basecamp")
            _ = try await store.logOut(identity: "basecamp")
            #expect(try await store.loadCookies(identity: "basecamp").isEmpty)
            // A jar saved after the logout (a response still on its way) is not kept, and
            // the identity stays logged out.
            try await store.saveCookies(Self.cookies, identity: "basecamp")
            #expect(try await store.loadCookies(identity: "basecamp").isEmpty)
            #expect(try await store.isLoggedOut(identity: "basecamp"))
            #expect(try await store.load(identity: "basecamp") == nil)
            // After a login the jar is kept again.
            try await store.save(Self.token("at-2"), identity: "basecamp")
            try await store.saveCookies(Self.cookies, identity: "basecamp")
            #expect(try await store.loadCookies(identity: "basecamp") == Self.cookies)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func anEmptyJarClearsTheCookiesAndKeepsTheToken(_ kind: StoreUnderTest) async throws {
        try await with(kind) { store in
            try await store.save(Self.token, identity: "basecamp")
            try await store.saveCookies(Self.cookies, identity: "basecamp")
            try await store.saveCookies([], identity: "basecamp")
            #expect(try await store.loadCookies(identity: "basecamp").isEmpty)
            expectSame(try await store.load(identity: "basecamp"), Self.token)
        }
    }
}

/// The failure a serve keeps for `latchkey status` (a misconfiguration), beside the token.
extension TokenStoreConformanceTests {
    static let failure = FailureRecord(message: "the authorization server refused the request with invalid_client (HTTP 401)",
                                       configKey: "identities.podio.client_secret", at: Date(timeIntervalSince1970: 1_700_000_000))

    @Test(arguments: StoreUnderTest.allCases)
    func aFailureIsKeptBesideTheTokenUntilATokenIsSaved(_ kind: StoreUnderTest) async throws {
        try await withPair(kind) { serve, status in
            #expect(try await status.loadFailure(identity: "podio") == nil)
            try await serve.save(Self.token, identity: "podio")
            try await serve.saveCookies(Self.cookies, identity: "podio")
            try await serve.saveFailure(Self.failure, identity: "podio")
            // Another process (`latchkey status`) reads it; the token and the cookies stay.
            #expect(try await status.loadFailure(identity: "podio") == Self.failure)
            #expect(try await status.loadFailure(identity: "other") == nil)
            expectSame(try await status.load(identity: "podio"), Self.token)
            #expect(try await status.loadCookies(identity: "podio") == Self.cookies)
            // A removed token (a refused refresh) leaves it; a saved one clears it.
            try await serve.save(nil, identity: "podio")
            #expect(try await status.loadFailure(identity: "podio") == Self.failure)
            try await serve.save(Self.token("at-2"), identity: "podio")
            #expect(try await status.loadFailure(identity: "podio") == nil)
            #expect(try await status.loadCookies(identity: "podio") == Self.cookies)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aFailureIsKeptAloneAndGoesWithNothingOrALogout(_ kind: StoreUnderTest) async throws {
        try await withPair(kind) { serve, status in
            try await serve.saveFailure(Self.failure, identity: "podio")
            #expect(try await status.loadFailure(identity: "podio") == Self.failure)
            #expect(try await status.load(identity: "podio") == nil)
            try await serve.saveFailure(nil, identity: "podio")
            #expect(try await status.loadFailure(identity: "podio") == nil)

            try await serve.saveFailure(Self.failure, identity: "podio")
            _ = try await serve.logOut(identity: "podio")
            #expect(try await status.loadFailure(identity: "podio") == nil)
            #expect(try await status.isLoggedOut(identity: "podio"))
        }
    }
}

/// The refresh lock (RefreshLease): one holder per identity across every handle on the store.
extension TokenStoreConformanceTests {
    private func withPair(_ kind: StoreUnderTest, _ body: (any TokenStore, any TokenStore) async throws -> Void) async throws {
        let (first, second, resources) = try kind.makePair()
        try await body(first, second)
        withExtendedLifetime(resources) {}
    }

    private func lease(_ attempt: RefreshLockAttempt, sourceLocation: SourceLocation = #_sourceLocation) throws -> RefreshLease {
        guard case .acquired(let lease) = attempt else {
            Issue.record("the refresh lock was not acquired", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return lease
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aHeldRefreshLockIsRefusedUntilItIsReleased(_ kind: StoreUnderTest) async throws {
        try await withPair(kind) { first, second in
            let held = try lease(try await first.acquireRefreshLock(identity: "podio"))
            #expect(held.identity == "podio")
            #expect(try await second.acquireRefreshLock(identity: "podio") == .heldElsewhere)
            #expect(try await first.acquireRefreshLock(identity: "podio") == .heldElsewhere)
            await first.releaseRefreshLock(held)
            let next = try lease(try await second.acquireRefreshLock(identity: "podio"))
            #expect(next.owner != held.owner)
            await second.releaseRefreshLock(next)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aStaleLeaseReleasesNothing(_ kind: StoreUnderTest) async throws {
        try await withPair(kind) { first, second in
            let old = try lease(try await first.acquireRefreshLock(identity: "podio"))
            await first.releaseRefreshLock(old)
            let current = try lease(try await second.acquireRefreshLock(identity: "podio"))
            await first.releaseRefreshLock(old)
            #expect(try await first.acquireRefreshLock(identity: "podio") == .heldElsewhere)
            await second.releaseRefreshLock(current)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func refreshLocksArePerIdentity(_ kind: StoreUnderTest) async throws {
        try await withPair(kind) { first, second in
            let alice = try lease(try await first.acquireRefreshLock(identity: "alice"))
            let bob = try lease(try await second.acquireRefreshLock(identity: "bob"))
            await first.releaseRefreshLock(alice)
            await second.releaseRefreshLock(bob)
        }
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aTokenSavedThroughOneHandleLoadsThroughTheOther(_ kind: StoreUnderTest) async throws {
        try await withPair(kind) { first, second in
            try await first.save(Self.token, identity: "podio")
            expectSame(try await second.load(identity: "podio"), Self.token)
        }
    }
}

/// Equal but for the last bits of the times, which a store may keep as Unix seconds.
func expectSame(_ loaded: TokenSet?, _ saved: TokenSet, sourceLocation: SourceLocation = #_sourceLocation) {
    guard let loaded else {
        Issue.record("no token loaded", sourceLocation: sourceLocation)
        return
    }
    var aligned = loaded
    func close(_ a: Date?, _ b: Date?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a.timeIntervalSince(b)) < 1e-6
    }
    if close(loaded.expiresAt, saved.expiresAt) { aligned.expiresAt = saved.expiresAt }
    if close(loaded.obtainedAt, saved.obtainedAt) { aligned.obtainedAt = saved.obtainedAt }
    #expect(aligned == saved, sourceLocation: sourceLocation)
}
