import LatchkeyLoop
import LatchkeySystem

/// The store's lock file, `.lock` in its directory: readers hold it shared and writers
/// exclusive (flock(2)), so that `latchkey login` in one process and `serve` in another
/// never interleave a read-modify-write. flock locks belong to the open file, so two
/// stores in one process exclude each other as two processes do.
///
/// The one owner of the descriptor, closed in deinit.
final class StoreLock: Sendable {
    private let file: FileDescriptor
    private let path: String

    init(directory: String) throws(TokenStoreError) {
        let path = directory + "/.lock"
        self.path = path
        file = try PrivateFile.openLockFile(path, .lockFile)
    }

    deinit {
        file.close()
    }

    /// Runs `body` holding the lock shared: other readers may run, no writer.
    func shared<T>(_ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        try holding(.shared, body)
    }

    /// Runs `body` holding the lock alone.
    func exclusive<T>(_ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        try holding(.exclusive, body)
    }

    /// Blocks until the lock is granted: the caller is the store's own queue, never the
    /// cooperative pool or an event loop.
    private func holding<T>(_ kind: FileDescriptor.LockKind, _ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        do throws(SystemError) {
            try file.lock(kind)
        } catch {
            throw TokenStoreError(.unusablePath, "cannot lock \(path): \(error.reason)")
        }
        defer { file.unlock() }
        return try body()
    }
}
