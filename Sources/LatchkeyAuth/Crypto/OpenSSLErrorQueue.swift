import LatchkeyTLS

/// OpenSSL reports why a call failed on a per-thread error queue. Each operation here runs
/// with the queue empty and leaves it empty, so a reason read inside is that operation's
/// and no stale entry reaches the next caller on this thread (OpenSSL 3's decoders leave
/// entries behind even when they succeed). The queue itself is read by LatchkeyTLS's
/// `OpenSSLErrors`; this adds the typed-throws scope the crypto code runs in.
enum OpenSSLErrorQueue {
    /// Runs `body` between two ERR_clear_error calls.
    static func isolating<T>(_ body: () throws(CryptoError) -> T) throws(CryptoError) -> T {
        OpenSSLErrors.clear()
        defer { OpenSSLErrors.clear() }
        return try body()
    }
}
