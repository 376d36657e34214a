import LatchkeyLoop
#if canImport(Glibc)
import Glibc
#endif

/// The connection's bytes go through the socket itself or through its TLS session: one
/// nil check on a plain listener's path, nothing allocated.
extension ServerConnection {
    /// read(2), or SSL_read: the byte count, 0 at the end of the stream (a TLS
    /// close_notify or failure included), nil when nothing is waiting.
    @inline(__always)
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        guard let tls else { return try socket.read(into: buffer) }
        crossedTLSWait.remove(.readWantsWritable)
        switch tls.read(into: buffer) {
        case .bytes(let count): return count
        case .wantRead: return nil
        // SSL_read has a record of its own to write first (the reply a TLS 1.3 KeyUpdate
        // asks for) and the socket is full: OpenSSL holds that record, not `output`, so
        // the read itself is retried once the socket is writable.
        case .wantWrite:
            crossedTLSWait.insert(.readWantsWritable)
            return nil
        case .closed: return 0
        }
    }

    /// send(2), or SSL_write: bytes written, 0 when the socket is full or the session
    /// must read first.
    @inline(__always)
    func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        guard let tls else { return try socket.send(bytes) }
        crossedTLSWait.remove(.writeWantsReadable)
        switch tls.write(bytes) {
        case .bytes(let count): return count
        case .wantWrite: return 0
        // SSL_write must read a record first: the flush is retried once the socket is
        // readable, not when it is writable (which it is, on every turn).
        case .wantRead:
            crossedTLSWait.insert(.writeWantsReadable)
            return 0
        case .closed: throw SystemError(call: "SSL_write", errno: EPIPE)
        }
    }

    /// Retries the TLS operations that wait for the other direction's readiness: a
    /// readable socket lets a blocked write on, a writable one a blocked read.
    func retryCrossedTLSWaits(_ events: IOEvents) {
        if crossedTLSWait.contains(.writeWantsReadable), events.contains(.readable) { flush() }
        if !machine.isClosed, crossedTLSWait.contains(.readWantsWritable), events.contains(.writable) { readInput() }
    }

    /// A TLS session holds decrypted bytes that epoll will not report, and the machine
    /// takes input now.
    var hasUnreadTLSInput: Bool {
        guard let tls, !machine.isClosed, tls.hasBufferedInput else { return false }
        return machine.wantsInput(bufferFull: inputIsFull)
    }
}

/// A TLS read or write that waits for the socket's readiness in the other direction than
/// its own (OpenSSL's SSL_ERROR_WANT_WRITE from SSL_read, SSL_ERROR_WANT_READ from
/// SSL_write). Waiting for its own direction instead would spin: level-triggered epoll
/// reports it ready on every turn while the operation cannot go on.
struct CrossedTLSWait: OptionSet {
    let rawValue: UInt8
    /// SSL_read waits for writable; the read is retried then.
    static let readWantsWritable = CrossedTLSWait(rawValue: 1 << 0)
    /// SSL_write waits for readable; the flush is retried then.
    static let writeWantsReadable = CrossedTLSWait(rawValue: 1 << 1)

    /// The epoll interest for a connection that `wanted` these events: a blocked
    /// operation's own direction is dropped (it cannot go on), the direction it waits for
    /// is added. A reset or hang-up is reported without interest.
    func interest(_ wanted: IOEvents) -> IOEvents {
        var interest: IOEvents = []
        if wanted.contains(.readable) && !contains(.readWantsWritable) || contains(.writeWantsReadable) {
            interest.insert(.readable)
        }
        if wanted.contains(.writable) && !contains(.writeWantsReadable) || contains(.readWantsWritable) {
            interest.insert(.writable)
        }
        return interest
    }
}
