import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide signal set-up. SIGTERM, SIGINT and SIGHUP are blocked in every thread and
/// read from a signalfd, so no handler ever runs on an arbitrary thread; SIGPIPE is
/// ignored, since libcurl with CURLOPT_NOSIGNAL no longer does that for us.
public enum ProcessSignals {
    public static let termination: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Call first thing in main, before any thread exists: threads inherit the mask.
    public static func prepare() {
        signal(SIGPIPE, SIG_IGN)
        _ = termination.withUnsafeBufferPointer { lk_block_signals($0.baseAddress, Int32($0.count)) }
    }

    /// Blocks the calling thread (never a loop, never the cooperative pool) until one of
    /// `termination` arrives, and returns it.
    public static func waitForTermination() throws(SystemError) -> Int32 {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in termination { sigaddset(&set, signal) }
        let fd = try systemCall("signalfd") { signalfd(-1, &set, Int32(SFD_CLOEXEC)) }
        defer { close(fd) }
        var info = signalfd_siginfo()
        while true {
            let count = try systemCall("read(signalfd)") { read(fd, &info, MemoryLayout<signalfd_siginfo>.size) }
            if count == MemoryLayout<signalfd_siginfo>.size { return Int32(info.ssi_signo) }
        }
    }
}
