import CLinux
import LatchkeyHTTP
import LatchkeyLoop
#if canImport(Glibc)
import Glibc
#endif

/// An address a listener binds to or a peer connects from, convertible to and from the
/// sockaddr structures the kernel wants.
public enum SocketAddress: Sendable, Equatable, CustomStringConvertible {
    case ipv4(host: String, port: Int)
    case ipv6(host: String, port: Int)
    case unix(path: String)

    public var description: String {
        switch self {
        case .ipv4(let host, let port): "\(host):\(port)"
        case .ipv6(let host, let port): "[\(host)]:\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }

    /// The host part as it appears in X-Forwarded-For; "unix" peers have none.
    public var host: String? {
        switch self {
        case .ipv4(let host, _), .ipv6(let host, _): host
        case .unix: nil
        }
    }

    public var port: Int? {
        switch self {
        case .ipv4(_, let port), .ipv6(_, let port): port
        case .unix: nil
        }
    }

    /// True for 127.0.0.0/8, ::1, IPv4-mapped loopback, and Unix sockets (local by nature).
    public var isLoopback: Bool {
        switch self {
        case .ipv4(let host, _): host.hasBytePrefix("127.")
        case .ipv6(let host, _): host == "::1" || host.hasBytePrefix("::ffff:127.")
        case .unix: true
        }
    }

    /// Resolves a numeric host (or "localhost") and port. Never does DNS: listeners name
    /// addresses, not names that could change under us.
    public static func numeric(host: String, port: Int) -> SocketAddress? {
        if host == "localhost" { return .ipv4(host: "127.0.0.1", port: port) }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return .ipv4(host: host, port: port) }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return .ipv6(host: host, port: port) }
        return nil
    }

    var family: Int32 {
        switch self {
        case .ipv4: AF_INET
        case .ipv6: AF_INET6
        case .unix: AF_UNIX
        }
    }

    /// Calls `body` with a sockaddr for this address.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> R) throws(SystemError) -> R {
        var storage = sockaddr_storage()
        let length: socklen_t
        switch self {
        case .ipv4(let host, let port):
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &sin.sin_addr)
            length = Self.copy(sin, into: &storage)
        case .ipv6(let host, let port):
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &sin6.sin6_addr)
            length = Self.copy(sin6, into: &storage)
        case .unix(let path):
            var sun = sockaddr_un()
            sun.sun_family = sa_family_t(AF_UNIX)
            let capacity = MemoryLayout.size(ofValue: sun.sun_path)
            guard path.utf8.count < capacity else { throw SystemError(call: "bind(unix path too long)", errno: ENAMETOOLONG) }
            withUnsafeMutableBytes(of: &sun.sun_path) { dst in
                for (i, byte) in path.utf8.enumerated() { dst[i] = byte }
            }
            length = Self.copy(sun, into: &storage)
        }
        return try withUnsafePointer(to: &storage) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                try body(address, length)
            }
        }
    }

    /// Copies a concrete sockaddr into the family-agnostic storage; returns its length.
    private static func copy<Address>(_ address: Address, into storage: inout sockaddr_storage) -> socklen_t {
        withUnsafeBytes(of: address) { source in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
        }
        return socklen_t(MemoryLayout<Address>.size)
    }

    /// Reads a sockaddr the kernel filled in (accept, getsockname).
    init?(storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let sin = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            var addr = sin.sin_addr
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
            self = .ipv4(host: Self.string(fromNulTerminated: text), port: Int(UInt16(bigEndian: sin.sin_port)))
        case AF_INET6:
            let sin6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            var addr = sin6.sin6_addr
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
            self = .ipv6(host: Self.string(fromNulTerminated: text), port: Int(UInt16(bigEndian: sin6.sin6_port)))
        case AF_UNIX:
            self = .unix(path: "")
        default:
            return nil
        }
    }

    private static func string(fromNulTerminated text: [CChar]) -> String {
        let bytes = text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
