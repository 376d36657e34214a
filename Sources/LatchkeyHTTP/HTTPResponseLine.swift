/// One line of an upstream response head, as libcurl's header callback hands them over:
/// the status line (`HTTP/1.1 200 OK\r\n`, `HTTP/2 200 \r\n`), a field line
/// (`Name: value\r\n`) or the empty line that ends the head (`\r\n`). libcurl calls back for
/// every head it receives (1xx heads, then the final one; after a redirect or an
/// authentication round, the next response's), so a status line starts a new head.
public enum HTTPResponseLine: Sendable, Equatable {
    case status(version: HTTPVersion, code: Int)
    case field(HTTPField)
    case end

    /// Parses one line, with or without its CRLF (a bare LF is tolerated: libcurl accepted
    /// the line already). Returns nil for a malformed line: a status line that is not
    /// `HTTP/x[.y] SP 3DIGIT [SP reason]`, a field line with an invalid name or a control
    /// byte in its value, or an obs-fold continuation line (RFC 9112 §5.2: folding is
    /// deprecated; answer 502 rather than guess). Whitespace before the colon is removed
    /// (RFC 9112 §5.1, what a proxy must do for responses); invalid UTF-8 in a value is
    /// replaced.
    public static func parse(_ line: UnsafeRawBufferPointer) -> HTTPResponseLine? {
        var end = line.count
        if end > 0, line[end - 1] == ASCII.lf {
            end -= 1
            if end > 0, line[end - 1] == ASCII.cr { end -= 1 }
        }
        if end == 0 { return .end }
        if end >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == ASCII.slash {
            return parseStatusLine(line, 0..<end)
        }
        do {
            let fieldLine = try FieldLine.parse(line, from: 0, upTo: end, .response)
            guard fieldLine.end == end else { return nil } // a CR inside the line
            return .field(fieldLine.responseField(in: line))
        } catch {
            return nil
        }
    }

    /// RFC 9112 §4: status-line = HTTP-version SP status-code SP [ reason-phrase ]. The
    /// reason is not kept (nothing may depend on it, RFC 9110 §15.1), and the trailing
    /// space may be missing.
    private static func parseStatusLine(_ line: UnsafeRawBufferPointer, _ range: Range<Int>) -> HTTPResponseLine? {
        var versionEnd = range.lowerBound
        while versionEnd < range.upperBound, line[versionEnd] != ASCII.sp { versionEnd += 1 }
        guard let version = HTTPVersion.parse(line, range.lowerBound..<versionEnd) else { return nil }
        let codeStart = versionEnd + 1
        guard codeStart + 3 <= range.upperBound else { return nil }
        var code = 0
        for position in codeStart..<(codeStart + 3) {
            let byte = line[position]
            guard ASCII.isDigit(byte) else { return nil }
            code = code * 10 + Int(byte &- ASCII.zero)
        }
        guard code >= 100 else { return nil }
        let afterCode = codeStart + 3
        guard afterCode == range.upperBound || line[afterCode] == ASCII.sp else { return nil }
        for position in afterCode..<range.upperBound where !ASCII.isFieldValueByte(line[position]) {
            return nil
        }
        return .status(version: version, code: code)
    }
}

extension HTTPResponseLine {
    /// Convenience for tests and callers holding bytes in an array or string.
    public static func parse(_ line: some StringProtocol) -> HTTPResponseLine? {
        var copy = String(line)
        return copy.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
    }
}
