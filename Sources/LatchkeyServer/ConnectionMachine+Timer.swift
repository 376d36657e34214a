import LatchkeyLoop

/// The connection's one timer: when it is due follows from the state, and so does what its
/// expiry means.
extension ConnectionMachine {
    enum TimerAction: Equatable {
        /// The client is gone or idle too long: close without an answer.
        case close
        /// The request head did not arrive in time: answer 408 and close.
        case headTimedOut(ErrorDocument)
        /// The request body did not arrive in time: refuse it with 408 and close.
        case bodyTimedOut(ErrorDocument)
        /// The TLS handshake did not complete within `after`: close (no HTTP can be spoken
        /// yet).
        case handshakeTimedOut(after: Duration)
        /// No byte went either way through a relayed tunnel for the tunnel idle timeout.
        case tunnelIdle
    }

    /// When the timer is due, or nil for no timer (the handler is working on a request and
    /// nothing waits on the client). `outputPending`: response bytes wait for the socket.
    /// Idle-type deadlines run from `now`: any progress restarts them.
    func timerDeadline(now: LoopInstant, outputPending: Bool, settings: ConnectionSettings) -> LoopInstant? {
        switch state {
        case .handshaking(let since, let timeout):
            return since.advanced(by: timeout)
        case .opened(let since), .readingHead(let since):
            return since.advanced(by: settings.headTimeout)
        case .idle, .closingAfterFlush, .openingTunnel:
            return now.advanced(by: settings.idleTimeout)
        case .relaying(let relay):
            switch relay.kind {
            case .tunnel: return now.advanced(by: settings.tunnelIdleTimeout)
            // Long-lived sockets are the point of an upgrade: no timeout unless configured.
            case .upgrade: return settings.upgradeIdleTimeout.map { now.advanced(by: $0) }
            }
        case .exchange(let exchange):
            // Only what is returned is computed: a Duration's nanoseconds take 128-bit
            // arithmetic, and this runs several times per request.
            if case .reading(let deadline) = exchange.request { return min(now.advanced(by: settings.idleTimeout), deadline) }
            return outputPending ? now.advanced(by: settings.idleTimeout) : nil
        case .lingering(let until):
            return until
        case .closed:
            return nil
        }
    }

    /// The timer set from `timerDeadline` fired at `now`.
    func timerFired(at now: LoopInstant) -> TimerAction {
        switch state {
        case .handshaking(_, let timeout):
            return .handshakeTimedOut(after: timeout)
        case .readingHead:
            return .headTimedOut(ErrorDocument(status: 408, error: "request_timeout", message: "the request head did not arrive in time"))
        case .exchange(let exchange):
            if case .reading(let deadline) = exchange.request, deadline <= now {
                return .bodyTimedOut(ErrorDocument(status: 408, error: "request_timeout", message: "the request body did not arrive in time"))
            }
            return .close
        case .relaying:
            return .tunnelIdle
        case .opened, .idle, .openingTunnel, .closingAfterFlush, .lingering, .closed:
            return .close
        }
    }
}
