import CLinux
import LatchkeyLoop
#if canImport(Glibc)
import Glibc
#endif

/// Owns one accepted, non-blocking client socket and closes it when it goes, if nothing
/// closed it before. Socket calls go through `systemCall` for EINTR and errno.
///
/// A noncopyable value, not an object: it lives inside its connection, 4 bytes there
/// instead of a pointer there and a 32-byte object beside it.
struct Socket: ~Copyable {
    /// -1 once closed: a call after the close fails with EBADF rather than reach whatever
    /// the number was reused for.
    private(set) var fd: Int32

    init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    mutating func close() {
        guard fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
    }

    /// TCP_NODELAY: responses are already coalesced per loop iteration, so Nagle's
    /// algorithm would only delay the next streamed chunk.
    func setNoDelay() {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// recv(2) without flags, which is read(2) for a socket by a shorter path through the
    /// kernel (no file-layer checks; 1% of a small request's CPU). Returns the byte count,
    /// 0 at end of stream, nil when nothing is waiting.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        do {
            return try systemCall("recv") { Glibc.recv(fd, buffer.baseAddress, buffer.count, 0) }
        } catch where error.wouldBlock {
            return nil
        }
    }

    /// recv(2) with MSG_PEEK: like `read`, but the bytes stay in the socket for the next
    /// reader (the TLS library, after a look at the first byte).
    func peek(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        do {
            return try systemCall("recv(MSG_PEEK)") { Glibc.recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_PEEK)) }
        } catch where error.wouldBlock {
            return nil
        }
    }

    /// send(2) with MSG_NOSIGNAL, so a vanished peer is an EPIPE error, never a SIGPIPE.
    /// Returns bytes written, 0 when the socket buffer is full.
    func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        do {
            return try systemCall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
        } catch where error.wouldBlock {
            return 0
        }
    }

    /// shutdown(SHUT_WR): tells the peer no more bytes follow, used before a lingering close.
    func shutdownWrite() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }
}
