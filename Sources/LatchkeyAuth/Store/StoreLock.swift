#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

/// The store's lock file, `.lock` in its directory: readers hold it shared and writers
/// exclusive (flock(2)), so that `latchkey login` in one process and `serve` in another
/// never interleave a read-modify-write. flock locks belong to the open file, so two
/// stores in one process exclude each other as two processes do.
///
/// The one owner of the descriptor, closed in deinit.
final class StoreLock: Sendable {
    private let fd: Int32
    private let path: String

    init(directory: String) throws(TokenStoreError) {
        let path = directory + "/.lock"
        self.path = path
        fd = try PrivateFile.openLockFile(path, .lockFile)
    }

    deinit {
        close(fd)
    }

    /// Runs `body` holding the lock shared: other readers may run, no writer.
    func shared<T>(_ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        try holding(LOCK_SH, body)
    }

    /// Runs `body` holding the lock alone.
    func exclusive<T>(_ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        try holding(LOCK_EX, body)
    }

    /// Blocks until the lock is granted: the caller is the store's own queue, never the
    /// cooperative pool or an event loop.
    private func holding<T>(_ operation: Int32, _ body: () throws(TokenStoreError) -> T) throws(TokenStoreError) -> T {
        do throws(SystemError) {
            _ = try systemCall("flock") { flock(fd, operation) }
        } catch {
            throw TokenStoreError(.unusablePath, "cannot lock \(path): \(PrivateFile.reason(error))")
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
