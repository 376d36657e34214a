/// An HTTP version as written in a start line: `HTTP/1.1` (RFC 9112 §2.3).
public struct HTTPVersion: Sendable, Equatable, Hashable {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)
    public static let http2 = HTTPVersion(major: 2, minor: 0)
}

extension HTTPVersion: CustomStringConvertible {
    public var description: String { "HTTP/\(major).\(minor)" }
}

extension HTTPVersion {
    /// Parses `HTTP/d.d`, or `HTTP/d` as libcurl reports HTTP/2 and HTTP/3 status lines.
    /// RFC 9112 §2.3: "HTTP" is case-sensitive and each part is one digit.
    static func parse(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> HTTPVersion? {
        let start = range.lowerBound
        guard range.count == 8 || range.count == 6,
              bytes[start] == 0x48, bytes[start + 1] == 0x54, bytes[start + 2] == 0x54,
              bytes[start + 3] == 0x50, bytes[start + 4] == ASCII.slash, // "HTTP/"
              ASCII.isDigit(bytes[start + 5])
        else { return nil }
        let major = Int(bytes[start + 5] &- ASCII.zero)
        if range.count == 6 { return HTTPVersion(major: major, minor: 0) }
        guard bytes[start + 6] == ASCII.dot, ASCII.isDigit(bytes[start + 7]) else { return nil }
        return HTTPVersion(major: major, minor: Int(bytes[start + 7] &- ASCII.zero))
    }
}
