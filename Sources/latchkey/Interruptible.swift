import Foundation
import LatchkeyLoop
import Synchronization

/// Runs `work` as a task while the calling thread (main, never the cooperative pool)
/// waits for it; SIGINT, SIGTERM or SIGHUP cancel the task, so that it can close what it
/// holds (the login's listening socket) and report. `ProcessSignals.prepare()` must have
/// blocked those signals first.
func runInterruptibly<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let finished = DispatchSemaphore(value: 0)
    let task = Task {
        let result: Result<T, any Error>
        do {
            result = .success(try await work())
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
        finished.signal()
    }
    // Blocked in read(2) on a signalfd until a signal comes; the process exits around it.
    let watcher = Thread {
        if (try? ProcessSignals.waitForTermination()) != nil { task.cancel() }
    }
    watcher.name = "latchkey-signals"
    watcher.start()
    finished.wait()
    return try outcome.withLock { $0! }.get()
}
