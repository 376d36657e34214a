#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

/// A program started and never waited for (the login's browser).
public enum DetachedProcess {
    /// `command`, found on PATH, with /dev/null for its standard streams and default
    /// dispositions for `defaultSignals` (ProcessSpawn). Throws the spawn's errno.
    public static func spawn(_ command: [String], defaultSignals: [Int32]) throws(SystemError) {
        _ = try ProcessSpawn.spawn(command, environment: nil, nullStreams: true, defaultSignals: defaultSignals)
    }
}
