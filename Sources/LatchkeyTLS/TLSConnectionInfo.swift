/// What a completed handshake agreed, for the access log, metrics and the cookies' Secure
/// flag.
public struct TLSConnectionInfo: Sendable, Equatable {
    /// "TLSv1.2" or "TLSv1.3".
    public var protocolVersion: String
    /// OpenSSL's name of the cipher suite.
    public var cipher: String
    /// The protocol chosen by ALPN ("http/1.1"), nil when the client offered none.
    public var alpn: String?
    /// The session was resumed from a ticket or the session cache.
    public var resumed: Bool
    /// The name the client asked for (SNI), nil when it sent none.
    public var serverName: String?
    /// The verified client certificate's subject (RFC 2253, "CN=svc,O=example"), nil
    /// without one.
    public var clientSubject: String?

    public init(protocolVersion: String, cipher: String, alpn: String?, resumed: Bool, serverName: String?, clientSubject: String?) {
        self.protocolVersion = protocolVersion
        self.cipher = cipher
        self.alpn = alpn
        self.resumed = resumed
        self.serverName = serverName
        self.clientSubject = clientSubject
    }
}

/// Why a client's TLS handshake failed: a bounded `reason` for metric labels, and OpenSSL's
/// wording in `detail` for the log (its fixed strings, never key material).
public struct TLSHandshakeFailure: Sendable, Equatable, Error {
    public enum Reason: String, Sendable, CaseIterable {
        /// The client spoke plain HTTP to the TLS port (answered 400 in plain HTTP).
        case plainHTTP = "plain_http"
        /// The handshake did not complete within the listener's handshake timeout.
        case timeout
        /// The client offered only protocol versions below TLS 1.2.
        case protocolVersion = "protocol_version"
        case noSharedCipher = "no_shared_cipher"
        /// The client refused our certificate (alerts unknown_ca, bad_certificate,
        /// certificate_unknown: an untrusted CA or a name it does not cover).
        case certificateRefused = "certificate_refused"
        /// mTLS: the client sent no certificate.
        case noClientCertificate = "no_client_certificate"
        /// mTLS: the client's certificate is not signed by the configured CA, or expired.
        case clientCertificateRejected = "client_certificate_rejected"
        /// The client closed or reset the connection mid-handshake.
        case closed
        case other
    }

    public let reason: Reason
    public let detail: String

    public init(_ reason: Reason, detail: String) {
        self.reason = reason
        self.detail = detail
    }
}
