#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import Synchronization

/// Keeps the recent auth events of every identity in memory for the status page
/// (`/.latchkey/`): one recorder per serve, in each identity's fan-out. Never a token:
/// events carry none.
final class AuthEventRecorder: AuthEventSink {
    /// Enough for a person to see what happened lately; the page stays small.
    static let defaultCapacity = 50

    private let ring: Mutex<AuthEventRing>
    private let clock: @Sendable () -> Date

    init(capacity: Int = defaultCapacity, clock: @escaping @Sendable () -> Date = { Date() }) {
        ring = Mutex(AuthEventRing(capacity: capacity))
        self.clock = clock
    }

    func record(_ event: AuthEvent) {
        let recorded = RecordedAuthEvent(at: clock(), event: event)
        ring.withLock { $0.append(recorded) }
    }

    /// A copy of what is held now.
    var events: AuthEventRing {
        ring.withLock { $0 }
    }
}
