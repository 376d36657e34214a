import COpenSSL

/// A private key (EVP_PKEY), owned. Never printed: nothing here renders its bytes except
/// `pem()` for the files that keep it.
public final class PrivateKey: @unchecked Sendable {
    public let pkey: OpaquePointer

    /// Takes ownership of `pkey`.
    public init(taking pkey: OpaquePointer) {
        self.pkey = pkey
    }

    deinit {
        EVP_PKEY_free(pkey)
    }


    /// The key of a PEM text (PKCS#8, or the traditional RSA/EC forms). Unencrypted keys
    /// only: a passphrase would have to be typed at every start.
    public static func load(pem: [UInt8], origin: String) throws(TLSError) -> PrivateKey {
        OpenSSLErrors.clear()
        defer { OpenSSLErrors.clear() }
        let bio = pem.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { throw TLSError(.setup, "\(origin): out of memory") }
        defer { BIO_free(bio) }
        guard let pkey = PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil) else {
            throw TLSError(.malformed, "\(origin): no readable PEM private key (truncated, encrypted or not a key: \(OpenSSLErrors.drainReasons()))")
        }
        return PrivateKey(taking: pkey)
    }
}
