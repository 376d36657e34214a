import LatchkeyLoop

/// The TLS handshake before HTTP: its own timeout, its end opening the connection for
/// requests, and a plain-HTTP client refused in plain HTTP.
extension ConnectionMachine {
    /// A connection accepted `now` on a TLS listener whose handshakes may take `timeout`.
    init(handshakingSince now: LoopInstant, timeout: Duration) {
        state = .handshaking(since: now, timeout: timeout)
    }

    var isHandshaking: Bool {
        if case .handshaking = state { return true }
        return false
    }

    /// The handshake completed at `now`: the first head's clock starts now, so a slow
    /// handshake does not eat into the time a client has to send its request.
    mutating func handshakeCompleted(at now: LoopInstant) {
        guard case .handshaking = state else { return }
        state = .opened(at: now)
    }

    /// The client's first byte is no TLS record (0x16, RFC 8446 §5.1's handshake content
    /// type): it speaks plain HTTP to the TLS port. Returns the plain-HTTP answer the
    /// server gives before closing (it answers it as a request it refuses on its own).
    mutating func plainHTTPArrived() -> ErrorDocument {
        serverAnswers()
        return Self.plainHTTPRefusal
    }

    static let plainHTTPRefusal = ErrorDocument(
        status: 400, error: "plain_http_to_tls_port", message: "this port speaks HTTPS: use https:// instead of http://")

    /// RFC 8446 §5.1: the content type of a handshake record, the first byte a TLS client sends.
    static let tlsHandshakeRecord: UInt8 = 0x16
}
