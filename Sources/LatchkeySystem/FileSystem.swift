#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

/// The calls on paths that open no file. Each throws the errno of the call it names.
public enum FileSystem {
    /// mkdir(2) with `permissions` (the umask may take some away).
    public static func makeDirectory(_ path: String, permissions: mode_t) throws(SystemError) {
        _ = try systemCall("mkdir") { mkdir(path, permissions) }
    }

    /// rename(2): replaces `target` at once, as one step.
    public static func rename(_ path: String, to target: String) throws(SystemError) {
        _ = try systemCall("rename") { Glibc.rename(path, target) }
    }

    /// link(2): a second name, never replacing one that exists (EEXIST).
    public static func link(_ path: String, to target: String) throws(SystemError) {
        _ = try systemCall("link") { Glibc.link(path, target) }
    }

    /// unlink(2).
    public static func remove(_ path: String) throws(SystemError) {
        _ = try systemCall("unlink") { unlink(path) }
    }

    /// lstat(2) failed with ENOENT: nothing has the name, not even a link.
    public static func isAbsent(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) != 0 && errno == ENOENT
    }

    /// access(2) R_OK: the process may read `path` now.
    public static func isReadable(_ path: String) -> Bool {
        access(path, R_OK) == 0
    }
}
