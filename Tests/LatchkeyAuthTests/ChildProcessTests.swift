import Glibc
import LatchkeySystem
import Testing

/// A command run and waited for: its environment is exactly the one given, and its end is
/// reported as a shell reports it.
@Suite(.serialized) struct ChildProcessTests {
    private func finished(_ process: ChildProcess) throws -> ProgramExit? {
        for _ in 0..<5000 {
            if let status = try process.reap() { return status }
            usleep(1000)
        }
        return nil
    }

    @Test func anExitCodeIsTheCommandsStatus() throws {
        let process = try ChildProcess(["sh", "-c", "exit 3"], environment: ["PATH": "/usr/bin:/bin"], defaultSignals: [])
        let status = try finished(process)
        #expect(status == .exited(3))
        #expect(status?.code == 3)
    }

    @Test func aSignalGivesOneHundredTwentyEightPlusItsNumber() throws {
        let process = try ChildProcess(["sh", "-c", "kill -TERM $$"], environment: ["PATH": "/usr/bin:/bin"], defaultSignals: [])
        let status = try finished(process)
        #expect(status == .signaled(SIGTERM))
        #expect(status?.code == 143)
    }

    @Test func theEnvironmentIsTheOneGiven() throws {
        let process = try ChildProcess(["sh", "-c", #"[ "$ONLY" = yes ] && [ -z "$HOME" ]"#], environment: ["PATH": "/usr/bin:/bin", "ONLY": "yes"],
                                       defaultSignals: [])
        #expect(try finished(process) == .exited(0))
    }

    @Test func aMissingProgramIsAnError() {
        #expect(throws: (any Error).self) {
            _ = try ChildProcess(["/nonexistent/program"], environment: [:], defaultSignals: [])
        }
    }
}
