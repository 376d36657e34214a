#if canImport(Glibc)
import Glibc
#endif

/// The blocking byte stream of one accepted test connection: reads into a buffer until a
/// marker or a length is there, and writes whole byte arrays. Shared by the hand-written
/// peers of the upstream and auth tests; used from one thread only.
public struct SocketStream {
    public let fd: Int32
    /// Bytes read and not yet consumed.
    public var buffer: [UInt8] = []

    public init(fd: Int32) { self.fd = fd }

    /// Reads what the socket has; false at EOF or on an error.
    public mutating func readMore() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n > 0 {
                buffer += chunk[..<n]
                return true
            }
            if n < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// Reads until `marker` is in the buffer; its offset, or nil at EOF.
    public mutating func readUntil(_ marker: [UInt8]) -> Int? {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                for i in searchFrom...(buffer.count - marker.count) where buffer[i..<(i + marker.count)].elementsEqual(marker) {
                    return i
                }
                searchFrom = buffer.count - marker.count + 1
            }
            guard readMore() else { return nil }
        }
    }

    /// Reads until the buffer holds `count` bytes; false at EOF.
    public mutating func readAtLeast(_ count: Int) -> Bool {
        while buffer.count < count {
            guard readMore() else { return false }
        }
        return true
    }

    /// Sends all of `bytes` (never SIGPIPE); stops quietly when the peer is gone.
    public func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return
            }
            offset += n
        }
    }
}
