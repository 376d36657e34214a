import COpenSSL

/// Classifying a failed handshake from what OpenSSL says: the reason code of the first
/// error it queued (for alerts received from the client, 1000 + the alert's number) and,
/// for a rejected client certificate, the verification result.
extension TLSSession {
    func failure(sslError: Int32) -> TLSHandshakeFailure {
        let code = ERR_peek_error()
        if sslError == SSL_ERROR_ZERO_RETURN || (sslError == SSL_ERROR_SYSCALL && code == 0) {
            OpenSSLErrors.clear()
            return TLSHandshakeFailure(.closed, detail: "the client closed the connection during the handshake")
        }
        let reason = TLSHandshakeFailure.Reason(openSSLReason: ERR_GET_REASON(code))
        var detail = OpenSSLErrors.drainReasons()
        if reason == .clientCertificateRejected {
            detail += " (\(String(cString: X509_verify_cert_error_string(Int(SSL_get_verify_result(ssl))))))"
        }
        return TLSHandshakeFailure(reason, detail: detail)
    }
}

extension TLSHandshakeFailure.Reason {
    /// The reason for an OpenSSL reason code (`ERR_GET_REASON`).
    init(openSSLReason code: Int32) {
        switch code {
        case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_VERSION_TOO_LOW, SSL_R_WRONG_VERSION_NUMBER, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
            self = .protocolVersion
        case SSL_R_NO_SHARED_CIPHER:
            self = .noSharedCipher
        // The client's alerts about our certificate: an untrusted issuer, a name it does
        // not cover, an expired one.
        case SSL_R_TLSV1_ALERT_UNKNOWN_CA, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN,
            SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
            self = .certificateRefused
        case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
            self = .noClientCertificate
        case SSL_R_CERTIFICATE_VERIFY_FAILED:
            self = .clientCertificateRejected
        case SSL_R_UNEXPECTED_EOF_WHILE_READING:
            self = .closed
        case SSL_R_HTTP_REQUEST:
            self = .plainHTTP
        default:
            self = .other
        }
    }
}
