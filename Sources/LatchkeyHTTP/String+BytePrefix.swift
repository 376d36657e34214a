extension String {
    /// Whether the string's UTF-8 starts with `prefix`'s bytes. A comparison of bytes, for
    /// prefixes of ASCII on the hot path, where `hasPrefix` compares Characters and costs a
    /// few hundred instructions for "127." or "/.latchkey".
    public func hasBytePrefix(_ prefix: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        return utf8.withContiguousStorageIfAvailable { bytes in
            bytes.count >= expected.count && UnsafeBufferPointer(rebasing: bytes[..<expected.count]).hasSameBytes(as: expected)
        } ?? utf8.starts(with: expected)
    }

    /// Whether the string's UTF-8 is `literal`'s bytes: for a method on the hot path.
    /// `==` on two different strings (a GET asked whether it is a HEAD) takes the
    /// runtime's slow path; a length that differs settles it here.
    @inline(__always)
    public func hasBytes(_ literal: StaticString) -> Bool {
        utf8.count == literal.utf8CodeUnitCount && hasBytePrefix(literal)
    }
}
