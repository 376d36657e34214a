import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyLoop
import LatchkeySystem
import Synchronization

/// The default token store: one file per identity in a private directory, sealed with
/// AES-256-GCM when there is a key, replaced atomically and durably, and shared with other
/// Latchkey processes (`latchkey login` beside `serve`, or two servers) under a lock file;
/// each identity's refresh lock is a file of its own (FileTokenStore+RefreshLock).
///
/// Its file operations block, so they run on the store's own serial queue, never on the
/// cooperative pool or an event loop; the async methods wait for the queue's answer.
public final class FileTokenStore: WatchableTokenStore {
    public var directory: String { files.path }
    let files: StoreDirectory
    let lock: StoreLock
    let key: StoreKey?
    /// Told what the store did by itself and the user should know: a plaintext file found
    /// while a key is configured, a corrupt file moved aside while saving.
    let notices: @Sendable (String) -> Void
    private let queue = DispatchQueue(label: "latchkey.token-store")
    /// What this store last read or wrote of each identity, so that `changes` reports what
    /// other processes did and not its own writes.
    let known = Mutex<[String: KnownEntry]>([:])
    /// Plaintext files already reported, until they are sealed.
    private let reportedPlaintext = Mutex<Set<String>>([])
    /// The descriptors holding refresh locks, by lease owner: closing one releases its lock.
    let refreshLocks = Mutex<[String: FileDescriptor]>([:])

    /// The store directory's signature at the last poll (`poll`).
    let directorySeen = Mutex(DirectorySeen(signature: nil, recheck: true))

    struct DirectorySeen {
        var signature: FileSignature?
        /// It changed too recently for its signature to prove it unchanged.
        var recheck: Bool
    }

    struct KnownEntry {
        var signature: FileSignature?
        /// The file changed too recently for its signature to prove it unchanged.
        var recheck: Bool
        var record: StoredRecord
    }

    /// One identity's file as read now.
    struct Snapshot {
        var signature: FileSignature?
        var record: StoredRecord
    }

    /// Opens `directory`, creating it (and missing parents) with mode 0700, and reads what
    /// `identities` have stored: a directory or file others can read, a file the key does
    /// not open, or an encrypted file without a key stops here, before anything uses the
    /// store. A corrupt file is left for `load`, which moves it aside and reports it;
    /// temporary files a crash left behind are removed. Blocks on file I/O: call it at
    /// start-up, off the cooperative pool.
    public init(directory: String, key: StoreKey?, identities: [String] = [],
                notices: @escaping @Sendable (String) -> Void = { _ in }) throws(TokenStoreError) {
        files = try StoreDirectory(creating: directory)
        lock = try StoreLock(directory: files.path)
        self.key = key
        self.notices = notices
        try lock.exclusive { () throws(TokenStoreError) in files.removeInterruptedWrites() }
        // One shared lock for all of them: a lock and an unlock per identity were 20,000
        // system calls at the start of a server with 10,000 identities.
        try lock.shared { () throws(TokenStoreError) in
            for identity in identities {
                let path = try files.file(for: identity)
                do throws(TokenStoreError) {
                    remember(identity, try snapshot(identity))
                } catch where error.code == .corrupt {
                    remember(identity, Snapshot(signature: FileSignature(path: path), record: StoredRecord()))
                }
            }
        }
    }

    deinit {
        refreshLocks.withLock { for file in $0.values { Self.release(file) } }
    }

    public func load(identity: String) async throws(TokenStoreError) -> TokenSet? {
        try await onQueue { () throws(TokenStoreError) in try self.current(identity).record.token }
    }

    /// Replaces the identity's token under the exclusive lock, keeping the rest of its
    /// record; a token ends a logout and a misconfiguration. A file that cannot be read
    /// (another key, a newer format) is never overwritten: that would silently throw away
    /// what it holds.
    public func save(_ token: TokenSet?, identity: String) async throws(TokenStoreError) {
        try await onQueue { () throws(TokenStoreError) in
            try self.write(identity) { $0.keep(token) }
        }
    }

    /// The file keeps only the mark: the token goes, and with it whatever else the record
    /// held for the identity (its cookie jar). Read and replaced under one exclusive lock,
    /// so the token returned is the last one any process stored.
    public func logOut(identity: String) async throws(TokenStoreError) -> TokenSet? {
        try await onQueue { () throws(TokenStoreError) in
            var removed: TokenSet?
            try self.write(identity) { record in
                removed = record.token
                record = StoredRecord(loggedOut: true)
            }
            return removed
        }
    }

    public func isLoggedOut(identity: String) async throws(TokenStoreError) -> Bool {
        try await onQueue { () throws(TokenStoreError) in try self.current(identity).record.loggedOut }
    }

    /// Like `save`: the rest of the record is kept, and an unreadable file never overwritten.
    public func saveFailure(_ failure: FailureRecord?, identity: String) async throws(TokenStoreError) {
        try await onQueue { () throws(TokenStoreError) in
            try self.write(identity) { $0.failure = failure }
        }
    }

    public func loadFailure(identity: String) async throws(TokenStoreError) -> FailureRecord? {
        try await onQueue { () throws(TokenStoreError) in try self.current(identity).record.failure }
    }

    public func loadCookies(identity: String) async throws(TokenStoreError) -> [String] {
        try await onQueue { () throws(TokenStoreError) in try self.current(identity).record.cookies ?? [] }
    }

    /// Like `save`: the rest of the record is kept, and an unreadable file never overwritten.
    /// A logged-out identity keeps no cookies: a jar saved after the logout (a response
    /// that was still on its way) must not bring the web session back.
    public func saveCookies(_ cookies: [String], identity: String) async throws(TokenStoreError) {
        try await onQueue { () throws(TokenStoreError) in
            try self.write(identity) { record in
                record.cookies = cookies.isEmpty || record.loggedOut ? nil : cookies
            }
        }
    }

    public func changes(among identities: [String]) async -> [String: StoreChange] {
        await onQueue { self.poll(identities) }
    }

    // MARK: on the queue

    func onQueue<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        try await queue.perform(body)
    }

    /// The identity's record; a corrupt file is moved aside first (and reported by
    /// throwing `.corrupt`, the new name in its message).
    func current(_ identity: String) throws(TokenStoreError) -> Snapshot {
        // Absent needs no lock: every writer renames its file into place, so a file is
        // there whole or not at all. Most identities of a large configuration have none
        // (lazy, never used), and the restore of 10,000 at start was a lock, an open and an
        // unlock each, twice.
        if FileSystem.isAbsent(try files.file(for: identity)) { return Snapshot(signature: nil, record: StoredRecord()) }
        do {
            return try lock.shared { () throws(TokenStoreError) in try snapshot(identity) }
        } catch where error.code == .corrupt {
            return try lock.exclusive { () throws(TokenStoreError) in
                // Another process may have replaced it in the meantime.
                do throws(TokenStoreError) {
                    return try snapshot(identity)
                } catch where error.code == .corrupt {
                    throw try moveAside(identity, error)
                }
            }
        }
    }

    /// Changes the identity's record with `change` under the exclusive lock: read, changed,
    /// replaced (or removed when nothing is left in it).
    private func write(_ identity: String, _ change: (inout StoredRecord) -> Void) throws(TokenStoreError) {
        try lock.exclusive { () throws(TokenStoreError) in
            let path = try files.file(for: identity)
            var record: StoredRecord
            do throws(TokenStoreError) {
                record = try snapshot(identity).record
            } catch where error.code == .corrupt {
                notices(try moveAside(identity, error).message)
                record = StoredRecord()
            }
            change(&record)
            if record.isEmpty {
                try PrivateFile.remove(path, in: files.path)
            } else {
                try PrivateFile.replace(path, in: files.path, with: try StoreEnvelope.encode(record, identity: identity, key: key))
                if key != nil { reportedPlaintext.withLock { _ = $0.remove(path) } }
            }
            remember(identity, Snapshot(signature: FileSignature(path: path), record: StoreEnvelope.normalized(record)))
        }
    }

    /// Reads and opens the identity's file; the caller holds the lock.
    func snapshot(_ identity: String) throws(TokenStoreError) -> Snapshot {
        let path = try files.file(for: identity)
        guard let file = try PrivateFile.read(path, .storeFile) else { return Snapshot(signature: nil, record: StoredRecord()) }
        var bytes = file.bytes
        defer { StoreKey.wipe(&bytes) }
        let (record, sealed) = try StoreEnvelope.decode(bytes, identity: identity, key: key, entry: "store file \(path)")
        if let key, !sealed, reportedPlaintext.withLock({ $0.insert(path).inserted }) {
            notices("store file \(path) is not encrypted although a store key is configured (\(key.origin)); "
                + "it is encrypted when its token is next saved")
        }
        return Snapshot(signature: file.status.signature, record: record)
    }

    /// Moves a corrupt file to `<file>.corrupt-<time>` and says so in the error returned.
    private func moveAside(_ identity: String, _ error: TokenStoreError) throws(TokenStoreError) -> TokenStoreError {
        let path = try files.file(for: identity)
        let target = files.quarantine(path, now: Date())
        try PrivateFile.moveAside(path, to: target, in: files.path)
        known.withLock { $0[identity]?.signature = nil }
        return TokenStoreError(.corrupt, "\(error.message); moved it aside to \(target)")
    }

    /// `now`: seconds since the epoch, for what counts as too recent.
    func remember(_ identity: String, _ snapshot: Snapshot, at now: Int64 = FileSignature.now) {
        known.withLock {
            $0[identity] = KnownEntry(signature: snapshot.signature, recheck: snapshot.signature?.isRecent(at: now) ?? false,
                                      record: snapshot.record)
        }
    }
}
