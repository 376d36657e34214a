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
        switch tls.read(into: buffer) {
        case .bytes(let count): return count
        // SSL_read wants to write only for a TLS 1.3 KeyUpdate while the socket is full;
        // the pending output's writable interest flushes it, and the client's next
        // record wakes the reader.
        case .wantRead, .wantWrite: return nil
        case .closed: return 0
        }
    }

    /// send(2), or SSL_write: bytes written, 0 when the socket is full.
    @inline(__always)
    func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        guard let tls else { return try socket.send(bytes) }
        switch tls.write(bytes) {
        case .bytes(let count): return count
        case .wantRead, .wantWrite: return 0
        case .closed: throw SystemError(call: "SSL_write", errno: EPIPE)
        }
    }

    /// A TLS session holds decrypted bytes that epoll will not report, and the machine
    /// takes input now.
    var hasUnreadTLSInput: Bool {
        guard let tls, !machine.isClosed, tls.hasBufferedInput else { return false }
        return machine.wantsInput(bufferFull: input.isFull)
    }
}
