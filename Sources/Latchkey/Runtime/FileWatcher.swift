import Foundation
import Synchronization

/// Runs the checks of files that change under a running server (secret files, the route
/// identity file `latchkey use` writes) once a second on a thread of its own: file I/O
/// never runs on an event loop, and a rotated Kubernetes secret or a `latchkey use` takes
/// effect without a restart.
final class FileWatcher: Sendable {
    typealias Check = @Sendable () -> Void

    private let stopped = Mutex(false)
    private let checks: Mutex<[Check]>

    init(checks: [Check], interval: Duration = .seconds(1)) {
        self.checks = Mutex(checks)
        let thread = Thread { [self] in
            while !self.stopped.withLock({ $0 }) {
                Thread.sleep(forTimeInterval: Double(interval.nanosecondsClamped) / 1e9)
                for check in self.checks.withLock({ $0 }) { check() }
            }
        }
        thread.name = "latchkey-files"
        thread.start()
    }

    /// The checks of a reloaded configuration, from the next pass on; a pass under way
    /// finishes with the ones it began with.
    func watch(_ checks: [Check]) {
        self.checks.withLock { $0 = checks }
    }

    func stop() {
        stopped.withLock { $0 = true }
    }
}
