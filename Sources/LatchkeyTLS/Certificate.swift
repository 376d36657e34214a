import COpenSSL

/// One X.509 certificate, owned (freed with it). Immutable once made, so it may be shared
/// between loops.
public final class Certificate: @unchecked Sendable {
    public let x509: OpaquePointer

    /// Takes ownership of `x509`.
    public init(taking x509: OpaquePointer) {
        self.x509 = x509
    }

    deinit {
        X509_free(x509)
    }

    /// The certificates of a PEM text, in order (a leaf and its chain). Throws `malformed`
    /// when there is none or one is cut short; `origin` names the file in the message.
    public static func chain(pem: [UInt8], origin: String) throws(TLSError) -> [Certificate] {
        OpenSSLErrors.clear()
        defer { OpenSSLErrors.clear() }
        var certificates: [Certificate] = []
        let text = pem
        let bio = text.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { throw TLSError(.setup, "\(origin): out of memory") }
        defer { BIO_free(bio) }
        while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
            certificates.append(Certificate(taking: x509))
        }
        // PEM_read_bio_X509 ends with "no start line" after the last certificate; any other
        // reason means a block that started but did not parse (truncated, corrupted).
        let last = ERR_peek_last_error()
        if last != 0, ERR_GET_REASON(last) != PEM_R_NO_START_LINE {
            throw TLSError(.malformed, "\(origin): a PEM certificate is truncated or corrupted (\(OpenSSLErrors.drainReasons()))")
        }
        guard !certificates.isEmpty else {
            throw TLSError(.malformed, "\(origin): no PEM certificate (expected -----BEGIN CERTIFICATE-----)")
        }
        return certificates
    }
}
