#if canImport(Glibc)
import Glibc
#endif

/// What stat(2) says about a file, following symbolic links: Kubernetes rotates a mounted
/// secret by swapping the `..data` symlink, so the target's identity changes. Watchers
/// compare signatures to see that a file was replaced or rewritten without reading it.
public struct FileSignature: Equatable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var modified: Int64
    public var modifiedNanoseconds: Int
    public var changed: Int64
    public var changedNanoseconds: Int

    /// Each path's signature (nil for one that cannot be stat'ed), for watchers that
    /// compare a set of files from one pass to the next.
    public static func of(_ paths: [String]) -> [String: FileSignature?] {
        Dictionary(paths.map { ($0, FileSignature(path: $0)) }) { first, _ in first }
    }

    /// nil when the file cannot be stat'ed (most often: it does not exist).
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// From what stat(2) or fstat(2) filled in.
    public init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec)
        changedNanoseconds = Int(info.st_ctim.tv_nsec)
    }

    /// Modified so recently that a rewrite within the file system's timestamp granularity
    /// could leave the signature unchanged (git's "racily clean" problem): such a file is
    /// read again on the next pass until it has aged.
    public var isRecent: Bool {
        isRecent(at: Self.now)
    }

    /// The seconds since the epoch that `isRecent(at:)` compares with: the file system's
    /// clock.
    public static var now: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }

    /// `isRecent` at `now` (seconds since the epoch), for callers with a clock of their own.
    public func isRecent(at now: Int64) -> Bool {
        max(modified, changed) >= now - 2
    }
}
