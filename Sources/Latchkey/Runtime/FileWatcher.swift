import Foundation
import Synchronization

/// Runs the checks of files that change under a running server (secret files, the route
/// identity file `latchkey use` writes) once a second on a thread of its own: file I/O
/// never runs on an event loop, and a rotated Kubernetes secret or a `latchkey use` takes
/// effect without a restart.
final class FileWatcher: Sendable {
    private let stopped = Mutex(false)

    init(checks: [@Sendable () -> Void], interval: Duration = .seconds(1)) {
        let thread = Thread { [self] in
            while !self.stopped.withLock({ $0 }) {
                Thread.sleep(forTimeInterval: Double(interval.nanosecondsClamped) / 1e9)
                for check in checks { check() }
            }
        }
        thread.name = "latchkey-files"
        thread.start()
    }

    func stop() {
        stopped.withLock { $0 = true }
    }
}
