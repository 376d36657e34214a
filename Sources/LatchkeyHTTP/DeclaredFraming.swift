/// What a response head says of its body's framing (RFC 9112 §6.3), read once, where the
/// head is parsed, and handed on with it. The decoder, the proxy deciding what to relay
/// and the server writing the client's head used to read it each on their own: three
/// walks of the fields and three parses of the same digits.
public enum DeclaredFraming: Sendable, Equatable {
    /// Transfer-Encoding: it wins over Content-Length, which says nothing of the body.
    case transferEncoded
    /// The length every Content-Length value agrees on. `canonical`: it is one line,
    /// written as `String(length)` writes it, the line a client may be given as it is.
    case length(UInt64, canonical: Bool)
    /// Neither field: the body, if the status has one, ends with the connection.
    case undeclared
    /// Content-Length values that are not plain digits or disagree: a broken upstream,
    /// whose head is never forwarded as it is.
    case invalid(HTTPParseError)

    public init(_ fields: borrowing HTTPFields) {
        if fields.contains(.transferEncoding) {
            self = .transferEncoded
            return
        }
        var semantics = HeadSemantics()
        var lines = 0
        var canonical = true
        do {
            try fields.forEachValue(of: .contentLength) { (value: UnsafeRawBufferPointer) throws(HTTPParseError) in
                try semantics.observeContentLength(value, 0..<value.count)
                lines += 1
                // Valid digits already: canonical unless padded, listed or led by a zero.
                canonical = canonical && Self.isPlainDecimal(value)
                return true
            }
        } catch {
            self = .invalid(error)
            return
        }
        guard let length = semantics.contentLength else {
            self = .undeclared
            return
        }
        self = .length(length, canonical: lines == 1 && canonical)
    }

    /// The body's length, when Content-Length states it.
    public var contentLength: UInt64? {
        if case .length(let length, _) = self { length } else { nil }
    }

    /// Whether the fields hold `length` as the one line a server would write for it.
    public func isCanonicalLine(for length: UInt64) -> Bool {
        if case .length(length, canonical: true) = self { true } else { false }
    }

    /// Whether a client may be given a head that says this (not `invalid`).
    public var isValid: Bool {
        if case .invalid = self { false } else { true }
    }

    /// Digits only, without a leading zero unless it is the only one.
    private static func isPlainDecimal(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let first = bytes.first, first != ASCII.zero || bytes.count == 1 else { return false }
        return bytes.allSatisfy(ASCII.isDigit)
    }
}
