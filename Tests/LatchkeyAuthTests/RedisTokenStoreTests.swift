import Foundation
import Synchronization
import Testing
@testable import LatchkeyAuth

/// What only the Redis store does, against a real redis-server of each test's own: leases
/// that expire, sealed values, other replicas' changes, a password, and an outage.
@Suite struct RedisTokenStoreTests {
    let token = TokenSet(accessToken: "lk-at-secret-1", refreshToken: "lk-rt-secret-1", expiresAt: Date(timeIntervalSince1970: 1_900_000_000),
                         obtainedAt: Date(timeIntervalSince1970: 1_800_000_000))

    func token(_ accessToken: String, obtainedAt seconds: Double) -> TokenSet {
        TokenSet(accessToken: accessToken, refreshToken: "rt-" + accessToken, obtainedAt: Date(timeIntervalSince1970: seconds))
    }

    /// The raw value of `key`, read past the store.
    func raw(_ server: RedisServer, _ key: String) throws -> RedisReply {
        try command(server, "GET", key)
    }

    /// `arguments` sent as a command, past the store.
    func command(_ server: RedisServer, _ arguments: String...) throws -> RedisReply {
        try RedisConnection(server.endpoint, password: nil, timeout: .seconds(2)).command(arguments.map { Array($0.utf8) })
    }

    @Test func anExpiredLeaseFreesTheLockAndItsOwnerCannotFreeTheNext() async throws {
        let server = try RedisServer()
        let first = server.store(prefix: "p:", leaseDuration: .seconds(60))
        let second = server.store(prefix: "p:", leaseDuration: .seconds(60))
        guard case .acquired(let stale) = try await first.acquireRefreshLock(identity: "idp") else { throw RedisServerError("no lease") }
        // The lease is Redis's to end: the lock's key lives as long as the lease.
        guard case .integer(let lifetime) = try command(server, "PTTL", "p:refresh-lock:idp") else { throw RedisServerError("no PTTL") }
        #expect(lifetime > 0 && lifetime <= 60_000)
        #expect(try await second.acquireRefreshLock(identity: "idp") == .heldElsewhere)
        // The holder died (it never released) and its lease ran out, brought forward here
        // rather than waited for: a wait raced a loaded machine's pauses.
        #expect(try command(server, "PEXPIRE", "p:refresh-lock:idp", "1") == .integer(1))
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while try raw(server, "p:refresh-lock:idp") != .null, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        // The lock went with its lease.
        guard case .acquired(let next) = try await second.acquireRefreshLock(identity: "idp") else { throw RedisServerError("no lease after expiry") }
        #expect(next.expiresAt! > Date().addingTimeInterval(50))
        await first.releaseRefreshLock(stale)
        #expect(try raw(server, "p:refresh-lock:idp") == .string(Array(next.owner.utf8)))
        await second.releaseRefreshLock(next)
        #expect(try raw(server, "p:refresh-lock:idp") == .null)
    }

    @Test func valuesAreTheStoreFilesEnvelopeSealedWithTheKey() async throws {
        let server = try RedisServer()
        let store = server.store(key: try testStoreKey(), prefix: "lk:")
        try await store.save(token, identity: "podio")
        guard case .string(let bytes) = try raw(server, "lk:token:podio") else { throw RedisServerError("no value") }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains("lk-at-secret-1") && !text.contains("lk-rt-secret-1"))
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: String])
        #expect(Set(fields.keys) == ["format", "cipher", "nonce", "ciphertext", "tag"])
        // Another key does not open it, and it is never overwritten by a store that cannot read it.
        let other = server.store(key: try testStoreKey(9), prefix: "lk:")
        let error = await #expect(throws: TokenStoreError.self) { try await other.load(identity: "podio") }
        #expect(error?.code == .wrongKey)
        #expect(error?.message.hasPrefix("redis key lk:token:podio does not open with the store key from test key") == true)
        await #expect(throws: TokenStoreError.self) { try await other.save(self.token("x", obtainedAt: 1), identity: "podio") }
        #expect(try raw(server, "lk:token:podio") == .string(bytes))
    }

    @Test func changesReportWhatOthersStoredAndNotItsOwnWrites() async throws {
        let server = try RedisServer()
        let watching = server.store(prefix: "w:")
        let other = server.store(prefix: "w:")
        #expect(await watching.changes(among: ["a", "b"]).isEmpty)
        try await watching.save(token("mine", obtainedAt: 1), identity: "a")
        #expect(await watching.changes(among: ["a", "b"]).isEmpty)
        try await other.save(token("theirs", obtainedAt: 2), identity: "b")
        #expect(await watching.changes(among: ["a", "b"]) == ["b": .stored(token("theirs", obtainedAt: 2))])
        #expect(await watching.changes(among: ["a", "b"]).isEmpty)
        try await other.save(nil, identity: "a")
        #expect(await watching.changes(among: ["a", "b"]) == ["a": .removed])
        // Another replica's cookie jar is no change of the token; a logout is.
        try await other.saveCookies(["cookie line"], identity: "b")
        #expect(await watching.changes(among: ["a", "b"]).isEmpty)
        #expect(try await other.logOut(identity: "b") == token("theirs", obtainedAt: 2))
        #expect(await watching.changes(among: ["a", "b"]) == ["b": .loggedOut])
        try await other.save(token("login", obtainedAt: 3), identity: "b")
        #expect(await watching.changes(among: ["a", "b"]) == ["b": .stored(token("login", obtainedAt: 3))])
    }

    @Test func aTokenKeptDuringAnOutageDoesNotUndoALogoutMadeSince() async throws {
        let server = try RedisServer()
        let notices = Mutex<[String]>([])
        let away = server.store(prefix: "l:", notices: { notice in notices.withLock { $0.append(notice) } })
        server.stop()
        await #expect(throws: TokenStoreError.self) { try await away.save(self.token("refreshed", obtainedAt: 2), identity: "idp") }
        try server.start()
        #expect(try await server.store(prefix: "l:").logOut(identity: "idp") == nil)
        try await Task.sleep(for: .milliseconds(300))  // past the back-off
        #expect(try await away.load(identity: "idp") == nil)
        #expect(try await away.isLoggedOut(identity: "idp"))
        #expect(notices.withLock { $0.last } == "identity idp was logged out while Redis was away; the token saved meanwhile is dropped")
    }

    @Test func aWriteBetweenTheReadAndTheTransactionIsNotLost() async throws {
        let server = try RedisServer()
        let first = server.store(prefix: "t:"), second = server.store(prefix: "t:")
        // Many interleaved read-modify-writes of one record from two replicas: each keeps
        // what the other wrote, as WATCH makes a transaction that raced start again.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { for index in 0..<40 { try await first.save(self.token("t\(index)", obtainedAt: Double(index)), identity: "idp") } }
            group.addTask { for index in 0..<40 { try await second.saveCookies(["c\(index)"], identity: "idp") } }
            try await group.waitForAll()
        }
        #expect(try await first.load(identity: "idp") == token("t39", obtainedAt: 39))
        #expect(try await first.loadCookies(identity: "idp") == ["c39"])
    }

    @Test func aTokenSavedWhileRedisIsAwayIsWrittenWhenItIsBack() async throws {
        let server = try RedisServer()
        let notices = Mutex<[String]>([])
        let store = server.store(prefix: "o:", notices: { notice in notices.withLock { $0.append(notice) } })
        let seen = Mutex<[StoreAvailability]>([])
        store.observeAvailability { availability in seen.withLock { $0.append(availability) } }
        try await store.save(token("before", obtainedAt: 1), identity: "idp")

        server.stop()
        let error = await #expect(throws: TokenStoreError.self) { try await store.save(self.token("during", obtainedAt: 2), identity: "idp") }
        #expect(error?.code == .unavailable)
        #expect(error?.message.hasPrefix("cannot connect to redis://127.0.0.1:\(server.port)/0: ") == true
            || error?.message.hasPrefix("lost the connection to redis://127.0.0.1:\(server.port)/0: ") == true)
        guard case .unavailable(let reason) = store.availability else { throw RedisServerError("still available") }
        #expect(reason.contains("redis://127.0.0.1:\(server.port)/0"))
        await #expect(throws: TokenStoreError.self) { try await store.acquireRefreshLock(identity: "idp") }

        // Back, empty (no persistence): the first call after the back-off reconnects and
        // writes the kept token before anything else.
        try server.start()
        let deadline = Date().addingTimeInterval(5)
        while store.availability != .available, Date() < deadline {
            _ = await store.changes(among: ["idp"])
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(store.availability == .available)
        #expect(try await store.load(identity: "idp") == token("during", obtainedAt: 2))
        #expect(seen.withLock { $0.map { $0 == .available } } == [true, false, true])
        #expect(notices.withLock { $0 } == [
            "Redis cannot be reached: the token of identity idp stays in this process's memory and is written when Redis is back",
            "wrote the token of identity idp that was saved while Redis was away",
        ])
    }

    @Test func aNewerTokenStoredMeanwhileWinsOverOneKeptDuringAnOutage() async throws {
        let server = try RedisServer()
        let away = server.store(prefix: "n:")
        server.stop()
        await #expect(throws: TokenStoreError.self) { try await away.save(self.token("older", obtainedAt: 1), identity: "idp") }
        try server.start()
        try await server.store(prefix: "n:").save(token("newer", obtainedAt: 2), identity: "idp")
        try await Task.sleep(for: .milliseconds(300))  // past the back-off
        #expect(try await away.load(identity: "idp") == token("newer", obtainedAt: 2))
    }

    @Test func thePasswordGoesWithAuthAndAWrongOneIsReportedWithoutIt() async throws {
        let server = try RedisServer(arguments: ["--requirepass", "s3cret-pass"])
        let refused = server.store(password: "wrong-pass")
        guard case .unavailable(let reason) = refused.availability else { throw RedisServerError("a wrong password was accepted") }
        #expect(reason.contains("refused the password"))
        #expect(!reason.contains("wrong-pass") && !reason.contains("s3cret-pass"))
        let missing = server.store()
        await #expect(throws: TokenStoreError.self) { try await missing.save(self.token, identity: "idp") }
        let store = server.store(password: "s3cret-pass")
        try await store.save(token, identity: "idp")
        #expect(try await store.load(identity: "idp") == token)
        #expect(store.availability == .available)
    }

    @Test func databasesAreKeptApart() async throws {
        let server = try RedisServer()
        var endpoint = server.endpoint
        endpoint.database = 3
        let three = RedisTokenStore(endpoint: endpoint, password: nil, keyPrefix: "d:", key: nil)
        try await three.save(token, identity: "idp")
        #expect(try await server.store(prefix: "d:").load(identity: "idp") == nil)
        #expect(try await three.load(identity: "idp") == token)
    }
}
