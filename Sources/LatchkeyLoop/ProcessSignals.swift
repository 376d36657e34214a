import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide signal set-up. SIGTERM, SIGINT and SIGHUP are blocked in every thread and
/// read from a signalfd, so no handler ever runs on an arbitrary thread; SIGPIPE is
/// ignored, since libcurl with CURLOPT_NOSIGNAL no longer does that for us.
public enum ProcessSignals {
    public static let termination: [Int32] = [SIGTERM, SIGINT, SIGHUP]
    /// What `serve` takes SIGHUP for, as nginx and Envoy do: re-read the configuration.
    public static let reload: Int32 = SIGHUP

    /// Call first thing in main, before any thread exists: threads inherit the mask.
    /// `also`: more signals read from a signalfd (`exec` waits for SIGCHLD).
    public static func prepare(also extra: [Int32] = []) {
        signal(SIGPIPE, SIG_IGN)
        let blocked = termination + extra
        _ = blocked.withUnsafeBufferPointer { lk_block_signals($0.baseAddress, Int32($0.count)) }
    }

    /// Blocks the calling thread (never a loop, never the cooperative pool) until one of
    /// `termination` arrives, and returns it. SIGHUP is among them for the commands that run
    /// in a terminal (it hung up); `serve` reads it with a `SignalReader` of its own, as the
    /// request to reload its configuration.
    public static func waitForTermination() throws(SystemError) -> Int32 {
        try SignalReader(termination).next()
    }
}
