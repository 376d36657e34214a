#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

extension FileDescriptor {
    public enum LockKind: Sendable {
        /// Readers: any number at once, no writer.
        case shared
        /// One holder alone.
        case exclusive
    }

    /// flock(2). The lock belongs to the open file: it excludes other processes and other
    /// descriptors of this one, and goes with the descriptor's close. Without `waiting`
    /// (LOCK_NB) a lock held elsewhere throws EWOULDBLOCK (`SystemError.wouldBlock`).
    public func lock(_ kind: LockKind, waiting: Bool = true) throws(SystemError) {
        let operation = (kind == .shared ? LOCK_SH : LOCK_EX) | (waiting ? 0 : LOCK_NB)
        _ = try systemCall("flock") { flock(rawValue, operation) }
    }

    /// flock(2) LOCK_UN.
    public func unlock() {
        _ = flock(rawValue, LOCK_UN)
    }
}
