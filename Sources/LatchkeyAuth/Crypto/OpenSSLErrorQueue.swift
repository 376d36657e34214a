import COpenSSL

/// OpenSSL reports why a call failed on a per-thread error queue. Each operation here runs
/// with the queue empty and leaves it empty, so a reason read inside is that operation's
/// and no stale entry reaches the next caller on this thread (OpenSSL 3's decoders leave
/// entries behind even when they succeed).
enum OpenSSLErrorQueue {
    /// Runs `body` between two ERR_clear_error calls.
    static func isolating<T>(_ body: () throws(CryptoError) -> T) throws(CryptoError) -> T {
        ERR_clear_error()
        defer { ERR_clear_error() }
        return try body()
    }

    /// The queued reasons, oldest first, as ERR_error_string_n words them
    /// ("error:1E08010C:DECODER routines::unsupported"); drains the queue. These are
    /// OpenSSL's fixed strings, never the data being processed.
    static func drainReasons() -> String {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let reason = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !reasons.contains(reason) { reasons.append(reason) }
        }
        return reasons.isEmpty ? "OpenSSL gave no reason" : reasons.joined(separator: "; ")
    }
}
