import Glibc
import LatchkeyLoop
import Testing
@testable import Latchkey

/// Signals while exec's command runs: its end is looked for, SIGINT, SIGTERM and SIGHUP are
/// passed on, but not a terminal's, which the command in the same process group has already.
struct ExecSupervisionTests {
    @Test func childEndIsReaped() {
        #expect(ExecSupervision.action(for: ReceivedSignal(number: SIGCHLD, fromKernel: true), childSharesProcessGroup: true) == .reap)
    }

    @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
    func aProcesssSignalIsPassedOn(_ number: Int32) {
        #expect(ExecSupervision.action(for: ReceivedSignal(number: number, fromKernel: false), childSharesProcessGroup: true) == .forward(number))
    }

    @Test func aTerminalsSignalIsNotSentTwice() {
        let ctrlC = ReceivedSignal(number: SIGINT, fromKernel: true)
        #expect(ExecSupervision.action(for: ctrlC, childSharesProcessGroup: true) == .ignore)
        // A command that left the group (setsid) did not get it: it is passed on.
        #expect(ExecSupervision.action(for: ctrlC, childSharesProcessGroup: false) == .forward(SIGINT))
    }
}
