#if canImport(Glibc)
import Glibc
#endif

/// A blocking client connection to 127.0.0.1, for the tests' side of the wire: reads give
/// up after `receiveTimeout` seconds, so a server that never answers fails the test
/// instead of hanging it. The caller closes the fd.
public enum LoopbackClient {
    public struct ConnectError: Error, Equatable {
        public let errno: Int32

        public init(errno: Int32) { self.errno = errno }
    }

    public static func connect(port: UInt16, receiveTimeout: Int = 10) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ConnectError(errno: errno) }
        var limit = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(INADDR_LOOPBACK).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw ConnectError(errno: code)
        }
        return fd
    }
}
