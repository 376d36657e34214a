#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

/// The process's open descriptors, as /proc/self/fd lists them: those a command inherited
/// (a shell's `3<file`) are what it may pass on to a program it runs; any Latchkey opened
/// itself must not reach that program, including those libraries open without
/// close-on-exec (libcurl 7.88's multi-handle wake-up socket pair).
public struct OpenDescriptors: Sendable {
    public let descriptors: Set<Int32>

    /// The descriptors open now.
    public static func current() -> OpenDescriptors {
        var found: Set<Int32> = []
        guard let directory = opendir("/proc/self/fd") else { return OpenDescriptors(descriptors: found) }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let fd = Int32(name) { found.insert(fd) }
        }
        return OpenDescriptors(descriptors: found)
    }

    /// Marks close-on-exec (fcntl(2) F_SETFD) every descriptor open now that was not among
    /// these: the ones opened since.
    public func closeOnExecAllButThese() {
        for fd in Self.current().descriptors.subtracting(descriptors) {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0, flags & FD_CLOEXEC == 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}
