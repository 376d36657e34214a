import LatchkeyLoop
import LatchkeyServer
import LatchkeyTLS
import Logging
import Synchronization

/// The warning for a failed TLS handshake, throttled (TLSFailureLogThrottle) across every
/// loop and configuration of the process: a client's connections land on any loop.
final class TLSFailureLog: Sendable {
    private let logger: Logger
    private let throttle = Mutex(TLSFailureLogThrottle())

    init(logger: Logger) {
        self.logger = logger
    }

    /// `detail` is OpenSSL's wording of the failure, never key material.
    func record(_ failure: TLSHandshakeFailure, listener: String, peer: SocketAddress?, now: LoopInstant) {
        let client = peer?.host ?? "unknown"
        guard throttle.withLock({ $0.shouldLog(client: client, reason: failure.reason, now: now) }) else { return }
        // A client that left without finishing is what TCP probes (a kubelet's, a load
        // balancer's) look like: worth a line, not a warning.
        let level: Logger.Level = failure.reason == .closed ? .info : .warning
        logger.log(level: level, "tls handshake failed", metadata: [
            "listener": .string(listener), "peer": .string(client), "reason": .string(failure.reason.rawValue),
            "detail": .string(failure.detail),
        ])
    }
}
