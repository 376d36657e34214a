import Foundation
import Synchronization
import Testing
@testable import LatchkeyAuth
import LatchkeyLoop
import LatchkeySystem
#if canImport(Glibc)
import Glibc
#endif

@Suite struct FileTokenStoreTests {
    let directory: TemporaryDirectory
    let storePath: String
    let token = TokenSet(accessToken: "lk-at-secret-1", refreshToken: "lk-rt-secret-1", expiresAt: Date(timeIntervalSince1970: 1_900_000_000),
                         obtainedAt: Date(timeIntervalSince1970: 1_800_000_000))

    init() throws {
        directory = try TemporaryDirectory()
        storePath = directory.appending("state/latchkey")
    }

    func store(key: StoreKey? = nil, identities: [String] = [], notices: @escaping @Sendable (String) -> Void = { _ in }) throws -> FileTokenStore {
        try FileTokenStore(directory: storePath, key: key, identities: identities, notices: notices)
    }

    var file: String { storePath + "/podio.json" }

    func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
    }

    func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    func entries() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: storePath).sorted() }

    // MARK: files and permissions

    @Test func filesAre0600InA0700DirectoryCreatedWithItsParents() async throws {
        try await store().save(token, identity: "podio")
        #expect(try mode(directory.appending("state")) == 0o700)
        #expect(try mode(storePath) == 0o700)
        #expect(try mode(file) == 0o600)
        #expect(try mode(storePath + "/.lock") == 0o600)
        #expect(try entries() == [".lock", "podio.json"])
    }

    @Test func aPlaintextFileIsTaggedWithItsFormat() async throws {
        try await store().save(token, identity: "podio")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes(file))) as? [String: Any])
        #expect(json["format"] as? String == "latchkey-token-v1")
        let stored = try #require(json["token"] as? [String: Any])
        #expect(stored["access_token"] as? String == "lk-at-secret-1")
        #expect(stored["expires_at"] as? Double == 1_900_000_000)
    }

    @Test func aLogoutKeepsOnlyItsMarkInTheFile() async throws {
        let store = try store()
        try await store.save(token, identity: "podio")
        _ = try await store.logOut(identity: "podio")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes(file))) as? [String: Any])
        #expect(json.keys.sorted() == ["format", "logged_out"])
        #expect(json["logged_out"] as? Bool == true)
        #expect(try mode(file) == 0o600)
    }

    @Test func aSealedFileHoldsNoTokenInTheClear() async throws {
        try await store(key: try testStoreKey()).save(token, identity: "podio")
        let text = String(decoding: try bytes(file), as: UTF8.self)
        #expect(!text.contains("lk-at-secret") && !text.contains("lk-rt-secret"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(json.keys) == ["format", "cipher", "nonce", "ciphertext", "tag"])
        #expect(json["cipher"] as? String == "aes-256-gcm")
    }

    @Test func aSealedFileHoldsNoCaptureInTheClear() async throws {
        let result = TokenSet(accessToken: "lk-session-secret", tokenType: nil, obtainedAt: Date(timeIntervalSince1970: 1_800_000_000),
                              captures: ["request_token": "lk-request-secret", "session_id": "lk-session-secret"])
        let store = try store(key: try testStoreKey())
        try await store.save(result, identity: "podio")
        let text = String(decoding: try bytes(file), as: UTF8.self)
        #expect(!text.contains("lk-session-secret") && !text.contains("lk-request-secret") && !text.contains("session_id"))
        #expect(try await store.load(identity: "podio") == result)
    }

    /// An entry written before recipes (no `captures`), and an OAuth token's entry, which
    /// keeps the bytes it always had.
    @Test func entriesWithoutCapturesStillRead() async throws {
        try FileManager.default.createDirectory(atPath: storePath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try write(#"{"format":"latchkey-token-v1","token":{"access_token":"old","obtained_at":1800000000}}"#, to: file)
        #expect(try await store().load(identity: "podio") == TokenSet(accessToken: "old", tokenType: nil,
                                                                      obtainedAt: Date(timeIntervalSince1970: 1_800_000_000)))
        try await store().save(token, identity: "podio")
        #expect(!String(decoding: try bytes(file), as: UTF8.self).contains("captures"))
    }

    @Test func aDirectoryOthersCanReadIsRefusedAsSshWould() throws {
        try FileManager.default.createDirectory(atPath: storePath, withIntermediateDirectories: true)
        chmod(storePath, 0o755)
        let error = try #require(throws: TokenStoreError.self) { try store() }
        #expect(error.code == .unsafePermissions)
        #expect(error.message == "store directory \(storePath) is accessible by others (mode 0755); run chmod 700 \(storePath)")
    }

    @Test func aFileOthersCanReadIsRefusedAtOpenAndAtLoad() async throws {
        let first = try store()
        try await first.save(token, identity: "podio")
        chmod(file, 0o640)
        let error = try #require(throws: TokenStoreError.self) { try store(identities: ["podio"]) }
        #expect(error.message == "store file \(file) is accessible by others (mode 0640); run chmod 600 \(file)")
        await #expect(throws: error) { try await first.load(identity: "podio") }
    }

    @Test func aPathOwnedByAnotherUserIsRefused() throws {
        var info = FileStatus(kind: .directory, owner: geteuid() &+ 1, group: getegid(), permissions: 0o700, signature: FileSignature(stat()))
        let error = try #require(throws: TokenStoreError.self) { try PrivateFile.requirePrivate(info, "/x", .storeDirectory) }
        #expect(error.code == .unsafePermissions)
        #expect(error.message.hasPrefix("store directory /x is owned by uid \(geteuid() &+ 1), not by uid \(geteuid())"))
        #expect(throws: TokenStoreError.self) { try PrivateFile.requirePrivate(info, "/x", .keyFile) }
        // As OpenSSH allows, root may own a key file.
        info.owner = 0
        try PrivateFile.requirePrivate(info, "/x", .keyFile)
    }

    @Test func aStoreFileThatIsALinkIsRefused() async throws {
        let store = try self.store()
        try write("{}", to: directory.appending("elsewhere.json"))
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: directory.appending("elsewhere.json"))
        let error = await #expect(throws: TokenStoreError.self) { try await store.load(identity: "podio") }
        #expect(error?.message == "store file \(file) is a symbolic link; it must be a regular file")
    }

    @Test func theTemporaryFileOfAnInterruptedWriteIsRemovedAtOpen() throws {
        _ = try store()
        try write("half a token", to: storePath + "/.podio.json.tmp-AbC123")
        _ = try store()
        #expect(try entries() == [".lock"])
    }

    @Test(arguments: ["", "../x", "a/b", ".hidden", "..", "ünï", "podio"])
    func identityNamesNeverLeaveTheDirectory(_ name: String) async throws {
        let store = try self.store()
        guard !name.isEmpty else {
            await #expect(throws: TokenStoreError.self) { try await store.save(token, identity: name) }
            return
        }
        let path = try store.files.file(for: name)
        #expect(path.hasPrefix(storePath + "/") && !path.dropFirst(storePath.count + 1).contains("/"))
        #expect(!path.dropFirst(storePath.count + 1).hasPrefix("."))
        try await store.save(token, identity: name)
        #expect(try await store.load(identity: name) == token)
        #expect(Set(try entries()) == [".lock", String(path.dropFirst(storePath.count + 1))])
    }

    @Test func escapedNamesDoNotCollide() throws {
        let files = try store().files
        #expect(try files.file(for: "a/b") != files.file(for: "a%2Fb"))
        #expect(try files.file(for: "a/b") == storePath + "/a%2Fb.json")
        #expect(try files.file(for: "a%2Fb") == storePath + "/a%252Fb.json")
    }

    // MARK: corrupt files

    static let corruptContents = [
        "", "{\"format\":\"latchkey-token-v1\",\"token\":{\"access_tok", "not json", "[1,2]", "{\"format\":\"other\"}",
        "{\"format\":\"latchkey-token-v1\",\"token\":{\"token_type\":\"Bearer\"}}",
        "{\"format\":\"latchkey-token-v1\",\"cipher\":\"aes-256-gcm\",\"nonce\":\"AAAA\",\"ciphertext\":\"\",\"tag\":\"\"}",
    ]

    @Test(arguments: corruptContents)
    func aCorruptOrTruncatedFileIsMovedAsideAndReported(_ contents: String) async throws {
        let store = try self.store(key: try testStoreKey())
        try FileManager.default.createDirectory(atPath: storePath, withIntermediateDirectories: true)
        try write(contents, to: file)
        let error = await #expect(throws: TokenStoreError.self) { try await store.load(identity: "podio") }
        #expect(error?.code == .corrupt)
        #expect(error?.message.hasPrefix("store file \(file) is not a Latchkey token file (") == true)
        let moved = try #require(try entries().first { $0.hasPrefix("podio.json.corrupt-") })
        #expect(error?.message.hasSuffix("; moved it aside to \(storePath)/\(moved)") == true)
        #expect(moved.wholeMatch(of: /podio\.json\.corrupt-\d{8}T\d{6}Z/) != nil)
        #expect(try bytes(storePath + "/" + moved) == Array(contents.utf8))
        // From then on the identity has nothing stored, and a save starts afresh.
        #expect(try await store.load(identity: "podio") == nil)
        try await store.save(token, identity: "podio")
        #expect(try await store.load(identity: "podio") == token)
    }

    @Test func aCorruptFileFoundWhileSavingIsMovedAsideWithANotice() async throws {
        let notices = Mutex<[String]>([])
        let store = try self.store { notice in notices.withLock { $0.append(notice) } }
        try write("garbage", to: file)
        try await store.save(token, identity: "podio")
        #expect(try await store.load(identity: "podio") == token)
        #expect(try entries().contains { $0.hasPrefix("podio.json.corrupt-") })
        #expect(notices.withLock { $0.count == 1 && $0[0].contains("moved it aside") })
    }

    @Test func twoCorruptFilesInOneSecondKeepBoth() throws {
        let files = try store().files
        try write("x", to: file)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let first = files.quarantine(file, now: now)
        #expect(first == file + ".corrupt-20270115T080000Z")
        try write("x", to: first)
        #expect(files.quarantine(file, now: now) == first + "-2")
    }

    @Test func aNewerFormatIsLeftAsItIs() async throws {
        let store = try self.store()
        let newer = "{\"format\":\"latchkey-token-v2\",\"token\":{}}"
        try write(newer, to: file)
        let error = await #expect(throws: TokenStoreError.self) { try await store.load(identity: "podio") }
        #expect(error?.code == .unsupportedFormat)
        #expect(try bytes(file) == Array(newer.utf8))
        await #expect(throws: TokenStoreError.self) { try await store.save(token, identity: "podio") }
        #expect(try bytes(file) == Array(newer.utf8))
    }

    // MARK: keys

    @Test func aWrongKeyIsAClearErrorAndTheFileIsNeverTouched() async throws {
        try await store(key: try testStoreKey(1)).save(token, identity: "podio")
        let before = try bytes(file)
        let wrongKey = try testStoreKey(2, origin: "environment variable LATCHKEY_STORE_KEY")
        let opening = try #require(throws: TokenStoreError.self) { try store(key: wrongKey, identities: ["podio"]) }
        #expect(opening.code == .wrongKey)
        #expect(opening.message == "store file \(file) does not open with the store key from environment variable LATCHKEY_STORE_KEY: "
            + "it was sealed with another key, for another identity, or altered; it is left as it is")
        let reader = try self.store(key: wrongKey)
        await #expect(throws: opening) { try await reader.load(identity: "podio") }
        await #expect(throws: opening) { try await reader.save(token, identity: "podio") }
        await #expect(throws: opening) { try await reader.save(nil, identity: "podio") }
        #expect(try bytes(file) == before)
        #expect(try entries() == [".lock", "podio.json"])
    }

    @Test func anEncryptedFileWithoutAKeyIsAClearError() async throws {
        try await store(key: try testStoreKey()).save(token, identity: "podio")
        let error = try #require(throws: TokenStoreError.self) { try store(identities: ["podio"]) }
        #expect(error.code == .keyMissing)
        #expect(error.message.contains("is encrypted, but no store key is configured; set LATCHKEY_STORE_KEY"))
    }

    @Test func aSealedFileCopiedToAnotherIdentityDoesNotOpen() async throws {
        let store = try self.store(key: try testStoreKey())
        try await store.save(token, identity: "podio")
        try FileManager.default.copyItem(atPath: file, toPath: storePath + "/kii.json")
        let error = await #expect(throws: TokenStoreError.self) { try await store.load(identity: "kii") }
        #expect(error?.code == .wrongKey)
    }

    @Test func aPlaintextFileIsReadWithANoticeAndSealedOnTheNextSave() async throws {
        try await store().save(token, identity: "podio")
        let notices = Mutex<[String]>([])
        let keyed = try store(key: try testStoreKey(), identities: ["podio"]) { notice in notices.withLock { $0.append(notice) } }
        #expect(try await keyed.load(identity: "podio") == token)
        #expect(notices.withLock { $0 } == ["store file \(file) is not encrypted although a store key is configured (test key); "
            + "it is encrypted when its token is next saved"])
        var rotated = token
        rotated.refreshToken = "lk-rt-secret-2"
        try await keyed.save(rotated, identity: "podio")
        #expect(!String(decoding: try bytes(file), as: UTF8.self).contains("lk-rt-secret"))
        #expect(try await keyed.load(identity: "podio") == rotated)
        #expect(notices.withLock { $0.count } == 1)
    }

    // MARK: sharing with other processes

    @Test func aWriterWaitsForTheLockAnotherHolds() async throws {
        let store = try self.store()
        let lock = open(storePath + "/.lock", O_RDWR)
        #expect(flock(lock, LOCK_EX) == 0)
        let saved = Mutex(false)
        let token = self.token
        let saving = Task {
            try await store.save(token, identity: "podio")
            saved.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!saved.withLock { $0 })
        #expect(FileManager.default.fileExists(atPath: file) == false)
        flock(lock, LOCK_UN)
        close(lock)
        try await saving.value
        #expect(try await store.load(identity: "podio") == token)
    }

    /// A file is there whole or not at all (writers rename it into place): an identity
    /// without one is answered at once, even while another process holds the lock (with
    /// the lock taken, this test would wait until its time limit).
    @Test(.timeLimit(.minutes(1))) func anAbsentFileIsAnsweredWithoutTheLock() async throws {
        let store = try self.store()
        let lock = open(storePath + "/.lock", O_RDWR)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX) == 0)
        #expect(try await store.load(identity: "podio") == nil)
        #expect(try await store.isLoggedOut(identity: "podio") == false)
        flock(lock, LOCK_UN)
    }

    @Test func twoStoresWritingAtOnceNeverLeaveAPartialFile() async throws {
        let key = try testStoreKey()
        let stores = [try store(key: key), try store(key: key)]
        let token = self.token
        let seen = try await withThrowingTaskGroup(of: [String].self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    var read: [String] = []
                    for round in 0..<40 {
                        var written = token
                        written.accessToken = "store-\(index)-round-\(round)"
                        try await store.save(written, identity: "podio")
                        read.append(try #require(try await store.load(identity: "podio")).accessToken)
                    }
                    return read
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(seen.count == 80)
        #expect(seen.allSatisfy { $0.hasPrefix("store-") })
        #expect(try entries() == [".lock", "podio.json"])
    }

    @Test func changesReportWhatOthersWroteAndNotOwnWrites() async throws {
        let key = try testStoreKey()
        let server = try store(key: key, identities: ["podio"])
        let cli = try store(key: key)
        #expect(await server.changes(among: ["podio"]).isEmpty)

        try await server.save(token, identity: "podio")
        #expect(await server.changes(among: ["podio"]).isEmpty)

        var loggedIn = token
        loggedIn.accessToken = "lk-at-login"
        try await cli.save(loggedIn, identity: "podio")
        let change = await server.changes(among: ["podio"])["podio"]
        guard case .stored(let taken) = change else {
            Issue.record("expected the stored token, got \(String(describing: change))")
            return
        }
        #expect(taken == loggedIn)
        #expect(await server.changes(among: ["podio"]).isEmpty)

        try await cli.save(nil, identity: "podio")
        #expect(await server.changes(among: ["podio"]) == ["podio": .removed])

        try await cli.save(token, identity: "podio")
        _ = await server.changes(among: ["podio"])
        _ = try await cli.logOut(identity: "podio")
        #expect(await server.changes(among: ["podio"]) == ["podio": .loggedOut])

        try write("garbage", to: file)
        guard case .unreadable(let reason)? = await server.changes(among: ["podio"])["podio"] else {
            Issue.record("expected an unreadable change")
            return
        }
        #expect(reason.contains("moved it aside"))
        #expect(await server.changes(among: ["podio"]).isEmpty)
    }

    /// Every writer renames into the directory or out of it: while the directory stands
    /// still, no file is looked at, and a file changed in place (as no writer does) goes
    /// unseen until the directory moves.
    @Test func filesAreLookedAtOnlyWhenTheDirectoryMoved() async throws {
        let key = try testStoreKey()
        let cli = try store(key: key)
        var later = token
        later.accessToken = "lk-at-later"
        try await cli.save(later, identity: "podio")
        let laterBytes = try bytes(file)
        try await cli.save(token, identity: "podio")
        let server = try store(key: key, identities: ["podio"])
        // Everything written so far counts as old enough to trust its signature.
        let aged = Int64(Date().timeIntervalSince1970) + 10
        #expect(server.poll(["podio"], now: aged).isEmpty)

        let descriptor = open(file, O_WRONLY | O_TRUNC)
        #expect(descriptor >= 0)
        #expect(laterBytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == laterBytes.count)
        close(descriptor)
        #expect(server.poll(["podio"], now: aged).isEmpty)

        try write("", to: storePath + "/unrelated")
        try FileManager.default.removeItem(atPath: storePath + "/unrelated")
        #expect(server.poll(["podio"], now: aged) == ["podio": .stored(later)])
    }

    @Test func cookiesShareTheIdentitysFileWhichGoesWhenBothAreGone() async throws {
        let store = try store(key: try testStoreKey())
        try await store.saveCookies(["app.example\tFALSE\t/\tFALSE\t0\tsession\tlk-cookie-secret"], identity: "podio")
        #expect(try entries() == [".lock", "podio.json"])
        #expect(try mode(file) == 0o600)
        #expect(!String(decoding: try bytes(file), as: UTF8.self).contains("lk-cookie-secret"))  // sealed with the token
        try await store.save(token, identity: "podio")
        try await store.save(nil, identity: "podio")
        #expect(try entries() == [".lock", "podio.json"])
        try await store.saveCookies([], identity: "podio")
        #expect(try entries() == [".lock"])
    }

    @Test func anotherProcessChangingOnlyTheCookiesIsNoTokenChange() async throws {
        let server = try store(identities: ["podio"])
        let other = try store()
        try await server.save(token, identity: "podio")
        try await other.saveCookies(["app.example\tFALSE\t/\tFALSE\t0\tsession\tabc"], identity: "podio")
        #expect(await server.changes(among: ["podio"]).isEmpty)
    }

    @Test func aFileSealedWithAnotherKeyIsReportedOnce() async throws {
        let server = try store(key: try testStoreKey(1), identities: ["podio"])
        try await store(key: try testStoreKey(2)).save(token, identity: "podio")
        guard case .unreadable(let reason)? = await server.changes(among: ["podio"])["podio"] else {
            Issue.record("expected an unreadable change")
            return
        }
        #expect(reason.contains("does not open with the store key"))
        // A recent file is checked again, but the same failure is not repeated.
        try await Task.sleep(for: .milliseconds(50))
        #expect(await server.changes(among: ["podio"]).isEmpty)
    }

    @Test func theRefreshLockIsAPrivateFileBesideTheToken() async throws {
        let store = try store()
        guard case .acquired(let lease) = try await store.acquireRefreshLock(identity: "podio") else {
            Issue.record("the refresh lock was not acquired")
            return
        }
        #expect(lease.expiresAt == nil)
        let lockFile = storePath + "/podio.refresh-lock"
        #expect(try mode(lockFile) == 0o600)
        await store.releaseRefreshLock(lease)
        // The lock file stays (removing it would race another process's flock), empty.
        #expect(try bytes(lockFile).isEmpty)
        chmod(lockFile, 0o644)
        let error = await #expect(throws: TokenStoreError.self) { try await store.acquireRefreshLock(identity: "podio") }
        #expect(error?.message == "refresh lock file \(lockFile) is accessible by others (mode 0644); run chmod 600 \(lockFile)")
    }

    /// A process being spawned holds a copy of every descriptor until it execs (O_CLOEXEC
    /// closes them only then), and a flock belongs to the open file, not the descriptor: a
    /// release that only closed its descriptor left the lock held by the copy, and another
    /// store found it `.heldElsewhere` (a conformance test, 1 run in many under load).
    @Test func aReleasedRefreshLockIsFreeWhileACopyOfItsDescriptorLives() async throws {
        let first = try store()
        let second = try store()
        guard case .acquired(let held) = try await first.acquireRefreshLock(identity: "podio") else {
            Issue.record("the refresh lock was not acquired")
            return
        }
        let copy = try #require(first.refreshLocks.withLock { $0[held.owner].map { dup($0.rawValue) } })
        defer { close(copy) }
        await first.releaseRefreshLock(held)
        guard case .acquired(let next) = try await second.acquireRefreshLock(identity: "podio") else {
            Issue.record("the released lock is still held through the copy")
            return
        }
        await second.releaseRefreshLock(next)
    }
}
