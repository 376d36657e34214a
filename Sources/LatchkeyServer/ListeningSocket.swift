import CLinux
import LatchkeyLoop
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A bound, listening socket shared by every loop: each registers the same fd with
/// EPOLLEXCLUSIVE, so one wake-up per new connection, and one code path for TCP and Unix
/// sockets. Created before the loops start; closed (and a Unix path unlinked) at release.
public final class ListeningSocket: Sendable {
    public let fd: Int32
    public let info: ListenerInfo
    private let unixPath: String?

    /// socket(2) + setsockopt + bind(2) + listen(2). Unix socket files are created private
    /// to the owner (0600): whoever can connect can spend the credentials behind it.
    /// `tls`: connections handshake TLS before HTTP.
    public init(address: SocketAddress, index: Int, backlog: Int32 = 1024, tls: ListenerTLS? = nil) throws(SystemError) {
        let fd = try systemCall("socket") {
            socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            switch address {
            case .unix(let path):
                try Self.removeStaleSocket(at: path)
            case .ipv4, .ipv6:
                var one: Int32 = 1
                _ = try systemCall("setsockopt(SO_REUSEADDR)") {
                    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
                }
                if case .ipv6 = address {
                    _ = try systemCall("setsockopt(IPV6_V6ONLY)") {
                        setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
                    }
                }
            }
            // A Unix socket file is created by bind(2) with the umask's permissions: make
            // them owner-only from the start rather than chmod afterwards. Listeners are
            // bound before any other thread starts, so the process-wide umask is ours.
            let isUnix = if case .unix = address { true } else { false }
            let previousMask = isUnix ? umask(0o177) : 0
            defer { if isUnix { umask(previousMask) } }
            _ = try address.withSockAddr { (pointer, length) throws(SystemError) in
                try systemCall("bind") { bind(fd, pointer, length) }
            }
            _ = try systemCall("listen") { listen(fd, backlog) }
            let bound = try Self.boundAddress(fd: fd) ?? address
            if case .unix = address {
                info = ListenerInfo(index: index, boundAddress: address, tls: tls)
            } else {
                info = ListenerInfo(index: index, boundAddress: bound, tls: tls)
            }
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        self.fd = fd
        if case .unix(let path) = address { unixPath = path } else { unixPath = nil }
    }

    private let closed = Mutex(false)

    deinit {
        close()
    }

    /// Closes the socket, so that the kernel stops completing handshakes for it, and
    /// removes a Unix socket's file. Call after every loop has stopped accepting on it.
    public func close() {
        let wasClosed = closed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !wasClosed else { return }
        _ = Glibc.close(fd)
        if let unixPath { unlink(unixPath) }
    }

    /// accept4(2), non-blocking and close-on-exec, and the peer's address. nil when no
    /// connection is waiting.
    func accept(peer: inout SocketAddress?) throws(SystemError) -> Socket? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        do {
            let client = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                    try systemCall("accept4") {
                        lk_accept4(fd, address, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                    }
                }
            }
            peer = SocketAddress(storage: storage)
            return Socket(fd: client)
        } catch where error.wouldBlock {
            return nil
        }
    }

    /// getsockname(2): the address actually bound (reveals the port chosen for port 0).
    private static func boundAddress(fd: Int32) throws(SystemError) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                try systemCall("getsockname") { getsockname(fd, address, &length) }
            }
        }
        return SocketAddress(storage: storage)
    }

    /// A socket file left by a previous run that crashed is removed. One that a running
    /// process still answers on, or any other kind of file at that path, is an error and
    /// never deleted.
    private static func removeStaleSocket(at path: String) throws(SystemError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw SystemError(call: "bind(\(path) exists and is not a socket)", errno: EEXIST)
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if probe >= 0 {
            defer { _ = Glibc.close(probe) }
            let answered = (try? SocketAddress.unix(path: path).withSockAddr { (pointer, length) throws(SystemError) in
                connect(probe, pointer, length) == 0
            }) ?? false
            if answered { throw SystemError(call: "bind(\(path) is in use by a running process)", errno: EADDRINUSE) }
        }
        _ = try systemCall("unlink") { unlink(path) }
    }
}
