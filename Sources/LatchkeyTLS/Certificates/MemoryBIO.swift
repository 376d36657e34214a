import COpenSSL

/// A memory BIO that OpenSSL writes into (PEM, a printed name), freed with it.
final class MemoryBIO {
    let bio: OpaquePointer

    init() throws(TLSError) {
        guard let bio = BIO_new(BIO_s_mem()) else { throw TLSError(.setup, "BIO_new failed: \(OpenSSLErrors.drainReasons())") }
        self.bio = bio
    }

    deinit {
        BIO_free(bio)
    }

    /// Everything written so far; drains the BIO.
    func drain() -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(bio))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = BIO_read(bio, &bytes, Int32(pending))
        return Array(bytes.prefix(Int(max(read, 0))))
    }
}
