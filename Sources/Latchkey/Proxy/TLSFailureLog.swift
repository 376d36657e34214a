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

    /// `detail` is OpenSSL's wording of the failure, never key material. `interceptedHost`:
    /// the handshake was inside a forward listener's CONNECT tunnel to that host, where a
    /// refused certificate means a client that does not trust the local CA or pins its
    /// own: the line says so, since the client's own error rarely does.
    func record(_ failure: TLSHandshakeFailure, listener: String, peer: SocketAddress?, interceptedHost: String? = nil, now: LoopInstant) {
        let client = peer?.host ?? "unknown"
        guard throttle.withLock({ $0.shouldLog(client: client, reason: failure.reason, now: now) }) else { return }
        // A client that left without finishing is what TCP probes (a kubelet's, a load
        // balancer's) look like: worth a line, not a warning. Inside a tunnel it is a
        // client giving up on our certificate.
        let level: Logger.Level = failure.reason == .closed && interceptedHost == nil ? .info : .warning
        var metadata: Logger.Metadata = [
            "listener": .string(listener), "peer": .string(client), "reason": .string(failure.reason.rawValue),
            "detail": .string(failure.detail),
        ]
        guard let interceptedHost else { return logger.log(level: level, "tls handshake failed", metadata: metadata) }
        metadata["host"] = .string(interceptedHost)
        if failure.reason == .certificateRefused || failure.reason == .closed { metadata["hint"] = .string(Self.interceptionHint) }
        logger.log(level: level, "intercepted tls handshake failed", metadata: metadata)
    }

    static let interceptionHint = "the client must trust Latchkey's local CA (latchkey exec sets the trust variables); "
        + "a client that pins certificates cannot be intercepted"
}
