import COpenSSL

/// OpenSSL reports why a call failed on a per-thread error queue; each operation here
/// starts with it empty and drains it, so a reason read is that operation's own.
public enum OpenSSLErrors {
    public static func clear() {
        ERR_clear_error()
    }

    /// The queued reasons, oldest first, in OpenSSL's fixed wording; drains the queue.
    /// These never carry the data being processed.
    public static func drainReasons() -> String {
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
