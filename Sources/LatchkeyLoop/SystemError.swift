import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, and the errno it set.
public struct SystemError: Error, Equatable, CustomStringConvertible, Sendable {
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(call): \(String(cString: strerror(errno)))"
    }

    /// True for the errno values a non-blocking fd answers when it has nothing to give.
    public var wouldBlock: Bool { errno == EAGAIN || errno == EWOULDBLOCK }
}

/// The one place that reads errno: runs `body`, retries on EINTR, and turns -1 into a
/// typed error naming the call. Inlinable: made for each caller's integer type, in the
/// caller's module; called through the generic entry point, each integer conversion was a
/// witness-table call (about 290 instructions per system call).
@inlinable @inline(__always)
public func systemCall<T: FixedWidthInteger>(_ call: StaticString, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = lk_errno()
        if code == EINTR { continue }
        throw SystemError(call: "\(call)", errno: code)
    }
}
