#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop

/// A program Latchkey runs in the foreground and waits for (`latchkey exec`'s command): it
/// shares Latchkey's standard streams, terminal and process group.
public final class ChildProcess {
    public let pid: pid_t
    /// Set once `reap` has seen it end; the pid may then belong to another process.
    public private(set) var status: ProgramExit?

    /// `command`, found on PATH, with `environment` as its whole environment (ProcessSpawn).
    public init(_ command: [String], environment: [String: String], defaultSignals: [Int32]) throws(SystemError) {
        pid = try ProcessSpawn.spawn(command, environment: environment, nullStreams: false, defaultSignals: defaultSignals)
    }

    /// waitpid(2) without blocking: the status once the program has ended, nil while it runs.
    public func reap() throws(SystemError) -> ProgramExit? {
        if let status { return status }
        var raw: Int32 = 0
        let reaped = try systemCall("waitpid") { waitpid(pid, &raw, WNOHANG) }
        guard reaped == pid else { return nil }
        status = ProgramExit(waitStatus: raw)
        return status
    }

    /// kill(2), while the program runs.
    public func send(_ signal: Int32) {
        guard status == nil else { return }
        _ = kill(pid, signal)
    }

    /// Whether the program is still in Latchkey's process group, where a terminal's signals
    /// (Ctrl-C, a hang-up) reach it without Latchkey's help.
    public var sharesProcessGroup: Bool {
        status == nil && getpgid(pid) == getpgrp()
    }
}

/// How a program ended, as a shell reports it.
public enum ProgramExit: Sendable, Equatable {
    case exited(Int32)
    case signaled(Int32)

    /// From a waitpid(2) status (WIFEXITED/WEXITSTATUS and WTERMSIG, macros Swift cannot
    /// call): the low 7 bits are the terminating signal, 0 for a normal exit whose code is
    /// in the next byte.
    init(waitStatus raw: Int32) {
        let signal = raw & 0x7F
        self = signal == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(signal)
    }

    /// The exit code, or 128 + the signal's number (a shell's `$?`).
    public var code: Int32 {
        switch self {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    }
}
