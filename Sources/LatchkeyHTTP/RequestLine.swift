#if canImport(Glibc)
import Glibc
#endif

/// `method SP request-target SP HTTP-version` (RFC 9112 §3), strictly: single spaces, a
/// token method, a target of visible ASCII only.
struct RequestLine {
    var method: String
    var target: String
    var version: HTTPVersion

    static func parse(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws(HTTPParseError) -> RequestLine {
        do {
            return try parseWithoutCR(bytes, line)
        } catch {
            // A CR inside the line is a bare one, which the scanner leaves to the parsers;
            // no valid request line holds one, so only a refused line is searched.
            throw bytes[line].contains(ASCII.cr) ? HTTPParseError(.invalidLineEnding) : error
        }
    }

    private static func parseWithoutCR(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws(HTTPParseError) -> RequestLine {
        let start = line.lowerBound
        let end = line.upperBound
        var methodEnd = start
        while methodEnd < end, ASCII.isTokenByte(bytes[methodEnd]) { methodEnd += 1 }
        guard methodEnd > start, methodEnd < end, bytes[methodEnd] == ASCII.sp else {
            throw HTTPParseError(.badRequestLine)
        }
        // The version is what follows the last space, so a space inside the target shows
        // up as an invalid target rather than as a garbled version.
        var versionStart = end
        while versionStart > methodEnd + 1, bytes[versionStart - 1] != ASCII.sp { versionStart -= 1 }
        guard versionStart > methodEnd + 1 else { throw HTTPParseError(.badRequestLine) }
        let target = (methodEnd + 1)..<(versionStart - 1)
        guard let version = HTTPVersion.parse(bytes, versionStart..<end), end - versionStart == 8 else {
            throw HTTPParseError(.badRequestLine)
        }
        guard !target.isEmpty else { throw HTTPParseError(.invalidTarget) }
        // RFC 9112 §3.2 and RFC 3986: a target is visible ASCII; CTLs, spaces and raw
        // non-ASCII bytes are refused (a browser percent-encodes them).
        for position in target where !(0x21...0x7E).contains(bytes[position]) {
            throw HTTPParseError(.invalidTarget)
        }
        // RFC 9110 §6.2: a server answers 505 to a major version it does not support; a
        // minor version other than 0 or 1 of HTTP/1 is not something we can interpret.
        guard version == .http1_1 || version == .http1_0 else { throw HTTPParseError(.unsupportedVersion) }
        return RequestLine(
            method: method(bytes, start..<methodEnd),
            target: ASCII.string(bytes, target),
            version: version
        )
    }

    /// The method as a string; the common ones (RFC 9110 §9.3) are literals, so that no
    /// string is made for them.
    private static func method(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        func matches(_ literal: StaticString) -> Bool {
            memcmp(bytes.baseAddress.unsafelyUnwrapped + range.lowerBound, literal.utf8Start, range.count) == 0
        }
        switch range.count {
        case 3:
            if matches("GET") { return "GET" }
            if matches("PUT") { return "PUT" }
        case 4:
            if matches("POST") { return "POST" }
            if matches("HEAD") { return "HEAD" }
        case 5 where matches("PATCH"): return "PATCH"
        case 6 where matches("DELETE"): return "DELETE"
        case 7 where matches("OPTIONS"): return "OPTIONS"
        default: break
        }
        return ASCII.string(bytes, range)
    }
}
