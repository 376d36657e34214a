import LatchkeyLoop
#if canImport(Glibc)
import Glibc
#endif

/// What `latchkey exec` does with each signal while its command runs: the command's end
/// (SIGCHLD) is looked for, and SIGINT, SIGTERM and SIGHUP are passed on — except those a
/// terminal sent to the whole foreground process group, which the command, in that group,
/// already has (as sudo does: a second Ctrl-C would cut short a program's own clean-up).
public enum ExecSupervision {
    public static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP]
    public static let childEnded: Int32 = SIGCHLD

    public enum Action: Equatable {
        /// Look whether the command has ended.
        case reap
        case forward(Int32)
        case ignore
    }

    public static func action(for signal: ReceivedSignal, childSharesProcessGroup: Bool) -> Action {
        if signal.number == childEnded { return .reap }
        guard forwarded.contains(signal.number) else { return .ignore }
        return signal.fromKernel && childSharesProcessGroup ? .ignore : .forward(signal.number)
    }
}
