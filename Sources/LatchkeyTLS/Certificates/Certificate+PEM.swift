import COpenSSL

extension Certificate {
    /// The certificate as PEM ("-----BEGIN CERTIFICATE-----"), ending with a line break.
    public func pem() throws(TLSError) -> [UInt8] {
        let bio = try MemoryBIO()
        OpenSSLErrors.clear()
        defer { OpenSSLErrors.clear() }
        guard PEM_write_bio_X509(bio.bio, x509) == 1 else {
            throw TLSError(.setup, "PEM_write_bio_X509 failed: \(OpenSSLErrors.drainReasons())")
        }
        return bio.drain()
    }
}
