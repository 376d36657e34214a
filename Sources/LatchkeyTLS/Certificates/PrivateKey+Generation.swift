import COpenSSL

extension PrivateKey {
    /// A new ECDSA key on P-256 (prime256v1), the curve every TLS client accepts
    /// (RFC 8446 §9.1 makes secp256r1 mandatory to implement).
    public static func generateP256() throws(TLSError) -> PrivateKey {
        OpenSSLErrors.clear()
        defer { OpenSSLErrors.clear() }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw TLSError(.setup, "EVP_PKEY_CTX_new_from_name failed: \(OpenSSLErrors.drainReasons())")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &pkey) == 1, let pkey
        else {
            throw TLSError(.setup, "cannot generate a P-256 key: \(OpenSSLErrors.drainReasons())")
        }
        return PrivateKey(taking: pkey)
    }

    /// The key as unencrypted PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), for the files that
    /// keep it; the caller wipes the bytes when done.
    public func pem() throws(TLSError) -> [UInt8] {
        let bio = try MemoryBIO()
        OpenSSLErrors.clear()
        defer { OpenSSLErrors.clear() }
        guard PEM_write_bio_PrivateKey(bio.bio, pkey, nil, nil, 0, nil, nil) == 1 else {
            throw TLSError(.setup, "PEM_write_bio_PrivateKey failed: \(OpenSSLErrors.drainReasons())")
        }
        return bio.drain()
    }
}
