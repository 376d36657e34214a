/// The bytes of one request on their way to a raw connection: the head, then the body in
/// its framing, in one queue that the socket takes from without a copy.
///
/// A request on a reused connection may have to go again, whole, on a new one: a pooled
/// connection the upstream closed while it idled fails on the first write or read (the
/// close and our request crossed). For that, the bytes written stay queued while
/// `keepsWritten`, up to `resendLimit`; past it, or once the upstream answers
/// (`forgetWritten`), they are dropped and the request can no longer be sent again.
struct RequestOutput {
    /// Written bytes kept for a resend at most: a larger body streams on, without the
    /// resend (as curl, which cannot rewind a streamed upload, fails such a request).
    static let resendLimit = 64 * 1024

    private var queue: ByteQueue
    /// Bytes at the front of the queue that are written and kept for a resend.
    private var written = 0
    /// Whether written bytes are kept, so that `rewind` can send the request whole.
    private(set) var keepsWritten = true

    /// Output that starts with `bytes` (a request's head), with room for `capacity` bytes
    /// before the first growth (`ByteQueue.init(holding:reserving:)`).
    init(holding bytes: [UInt8], reserving capacity: Int) {
        queue = ByteQueue(holding: bytes, reserving: capacity)
    }

    /// Bytes queued and not yet written.
    var unwritten: Int { queue.count - written }

    /// Bytes held: unwritten, and written ones kept for a resend.
    var held: Int { queue.count }

    /// Bytes it holds before its queue grows.
    var capacity: Int { queue.capacity }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        queue.append(bytes)
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { queue.append($0) }
    }

    /// The next unwritten bytes, as far as they lie contiguous; empty when none wait.
    func withUnwritten<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try queue.withContiguousBytes(from: written, body)
    }

    /// `count` of the unwritten bytes went to the connection.
    mutating func wrote(_ count: Int) {
        guard keepsWritten else { return queue.removeFirst(count) }
        written += count
        if written > Self.resendLimit { forgetWritten() }
    }

    /// No resend can follow (the upstream answered, or the connection is not a reused
    /// one): the written bytes are dropped and no more are kept.
    mutating func forgetWritten() {
        queue.removeFirst(written)
        written = 0
        keepsWritten = false
    }

    /// Everything goes again from the first byte, on a new connection, which is never
    /// retried: nothing is kept from now on. Only while `keepsWritten`.
    mutating func rewind() {
        assert(keepsWritten, "a rewind needs every written byte")
        written = 0
        keepsWritten = false
    }

    mutating func removeAll() {
        queue.removeAll()
        written = 0
        keepsWritten = false
    }
}
