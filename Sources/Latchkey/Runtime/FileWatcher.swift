import Foundation
import LatchkeyLoop
import Logging
import Synchronization

/// Re-reads secret files once a second on a thread of its own (file I/O never runs on an
/// event loop), so a rotated Kubernetes secret takes effect without a restart.
final class SecretWatcher: Sendable {
    private let stopped = Mutex(false)

    init(credentials: CredentialStore, logger: Logger, interval: Duration = .seconds(1)) {
        let thread = Thread { [self] in
            while !self.stopped.withLock({ $0 }) {
                Thread.sleep(forTimeInterval: Double(interval.nanosecondsClamped) / 1e9)
                let changed = credentials.reloadIfChanged()
                if !changed.isEmpty {
                    logger.info("secret files changed", metadata: ["credentials": .array(changed.map { .string($0) })])
                }
            }
        }
        thread.name = "latchkey-secrets"
        thread.start()
    }

    func stop() {
        stopped.withLock { $0 = true }
    }
}
