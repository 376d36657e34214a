import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A listening socket on 127.0.0.1, port 0, for the hand-written test peers: each accepted
/// connection is handed to `serve` on a thread of its own; `serve` owns the fd and closes
/// it (a test may reset it instead).
public final class LoopbackListener: Sendable {
    public let port: UInt16
    private let listenFD: Int32
    private let stopped = Mutex(false)
    private let accepted = AcceptCount()

    /// Connections accepted so far.
    public var acceptCount: Int { accepted.value.withLock { $0 } }

    public init(serve: @escaping @Sendable (Int32) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LoopbackListenerError.socket(errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let error = errno
            close(fd)
            throw LoopbackListenerError.socket(error)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        port = UInt16(bigEndian: address.sin_port)
        let accepted = self.accepted
        Thread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    // Stopped: only now is the fd number free for reuse.
                    close(fd)
                    return
                }
                accepted.value.withLock { $0 += 1 }
                Thread { serve(client) }.start()
            }
        }.start()
    }

    /// Stops accepting: shutdown(2) refuses new connections and wakes the blocked accept,
    /// whose thread then closes the fd. Closing it here instead would let a later listener
    /// get the same number while that thread could still call accept on it, and serve the
    /// later peer's connections with this one's handler. Idempotent.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listenFD, Int32(SHUT_RDWR))
    }

    deinit { stop() }
}

/// Shared by the listener and its accept thread.
private final class AcceptCount: Sendable {
    let value = Mutex(0)
}

public enum LoopbackListenerError: Error {
    case socket(Int32)
}
