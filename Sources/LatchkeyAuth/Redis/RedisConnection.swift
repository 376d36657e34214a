import LatchkeyConfig
import CHiredis
#if canImport(Glibc)
import Glibc
#endif

/// One blocking hiredis connection (redisContext): connected, authenticated and on its
/// database when `init` returns. The one owner of the context, freed in deinit (STYLE
/// habit 7). Its calls block up to `timeout`, so it lives on the Redis store's own queue
/// only, never on the cooperative pool or an event loop. After an I/O error the context is
/// unusable (hiredis sets `err` for good): the store drops it and connects anew.
final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>
    private let endpoint: RedisEndpoint

    /// `timeout` bounds the connect and then each command's send and answer.
    init(_ endpoint: RedisEndpoint, password: String?, timeout: Duration) throws(TokenStoreError) {
        self.endpoint = endpoint
        let limit = timeval(timeout)
        // redisConnectWithTimeout: NULL only when it cannot allocate the context.
        guard let context = redisConnectWithTimeout(endpoint.host, Int32(endpoint.port), limit) else {
            throw TokenStoreError(.unavailable, "cannot connect to \(endpoint): out of memory")
        }
        self.context = context
        guard context.pointee.err == 0 else { throw failure("cannot connect") }
        guard redisSetTimeout(context, limit) == REDIS_OK else { throw failure("cannot set the command timeout") }
        if let password {
            let words = [Array("AUTH".utf8)] + (endpoint.username.map { [Array($0.utf8)] } ?? []) + [Array(password.utf8)]
            // The answer says why (WRONGPASS) without repeating the password.
            if case .error(let message) = try command(words) { throw TokenStoreError(.unavailable, "\(endpoint) refused the password: \(message)") }
        }
        if endpoint.database != 0, case .error(let message) = try command(["SELECT", String(endpoint.database)].map { Array($0.utf8) }) {
            throw TokenStoreError(.unavailable, "\(endpoint) cannot select database \(endpoint.database): \(message)")
        }
    }

    deinit {
        redisFree(context)
    }

    /// Sends one command, binary-safe, and waits for its answer (redisCommandArgv). Throws
    /// `.unavailable` when the connection failed; an `-ERR` answer is a reply, not a throw.
    func command(_ words: [[UInt8]]) throws(TokenStoreError) -> RedisReply {
        var pointers: [UnsafePointer<CChar>?] = []
        defer { for pointer in pointers { pointer.map { UnsafeMutablePointer(mutating: $0).deallocate() } } }
        for word in words {
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(word.count, 1))
            word.withUnsafeBytes { bytes in UnsafeMutableRawPointer(copy).copyMemory(from: bytes.baseAddress ?? UnsafeRawPointer(copy), byteCount: bytes.count) }
            pointers.append(UnsafePointer(copy))
        }
        let lengths = words.map(\.count)
        let raw = pointers.withUnsafeMutableBufferPointer { argv in
            lengths.withUnsafeBufferPointer { redisCommandArgv(context, Int32(words.count), argv.baseAddress, $0.baseAddress) }
        }
        guard let raw else { throw failure("lost the connection") }
        defer { freeReplyObject(raw) }
        return RedisReply(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// hiredis' own words for what went wrong (errstr: "Connection refused", "Server
    /// closed the connection"), with the endpoint.
    private func failure(_ what: String) -> TokenStoreError {
        let reason = withUnsafeBytes(of: context.pointee.errstr) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return TokenStoreError(.unavailable, "\(what) to \(endpoint): \(reason.isEmpty ? "unknown error" : reason)")
    }
}

extension timeval {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
