import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A signalfd(2) over a set of signals that `ProcessSignals.prepare()` blocked, read one
/// signal at a time by one thread (never a loop, never the cooperative pool). A signal that
/// arrives while its reader is busy stays pending and is read next: `serve` reloads on
/// SIGHUP and still sees a SIGTERM sent meanwhile.
public final class SignalReader {
    private let fd: Int32

    public init(_ signals: [Int32]) throws(SystemError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        fd = try systemCall("signalfd") { signalfd(-1, &set, Int32(SFD_CLOEXEC)) }
    }

    deinit {
        close(fd)
    }

    /// Blocks until one of the signals arrives, and returns it.
    public func next() throws(SystemError) -> Int32 {
        try nextSignal().number
    }

    /// Blocks until one of the signals arrives, and returns it with who sent it.
    public func nextSignal() throws(SystemError) -> ReceivedSignal {
        var info = signalfd_siginfo()
        while true {
            let count = try systemCall("read(signalfd)") { read(fd, &info, MemoryLayout<signalfd_siginfo>.size) }
            if count == MemoryLayout<signalfd_siginfo>.size {
                return ReceivedSignal(number: Int32(info.ssi_signo), fromKernel: info.ssi_code == Self.siKernel)
            }
        }
    }

    /// SI_KERNEL (not imported): the signal's `si_code` when the kernel sent it, as a
    /// terminal's Ctrl-C and hang-up are.
    static let siKernel: Int32 = 0x80
}

public struct ReceivedSignal: Sendable, Equatable {
    public let number: Int32
    /// Sent by the kernel (a terminal's Ctrl-C or hang-up, to the whole foreground process
    /// group), not by a process with kill(2).
    public let fromKernel: Bool

    public init(number: Int32, fromKernel: Bool) {
        self.number = number
        self.fromKernel = fromKernel
    }
}
