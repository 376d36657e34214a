/// Byte classes and comparisons of the HTTP grammar (RFC 9110 §5.6, RFC 9112), on
/// `UInt8`s. The codec never builds a `String` to inspect or compare: lowercasing and
/// splitting strings was a measurable part of a proxy's CPU per request.
enum ASCII {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let sp: UInt8 = 0x20
    static let htab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let comma: UInt8 = 0x2C
    static let semicolon: UInt8 = 0x3B
    static let dot: UInt8 = 0x2E
    static let slash: UInt8 = 0x2F
    static let zero: UInt8 = 0x30

    /// RFC 9110 §5.6.2: tchar, the bytes of a token (field names, methods, codings):
    /// `! # $ % & ' * + - . ^ _ ` | ~`, DIGIT and ALPHA. ASCIITests checks the bitmap
    /// against the list.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        isIn(byte, below64: 0x03FF_6CFA_0000_0000, from64: 0x57FF_FFFF_C7FF_FFFE)
    }

    /// RFC 3986 §3.2.2 and §3.2.3: the bytes a Host's `uri-host [ ":" port ]` can hold:
    /// unreserved, sub-delims, `:`, `[`, `]` (IP literals) and `%` (percent-encoding).
    /// `@`, `/`, whitespace and the like, which host-confusion attacks use, are not among
    /// them. ASCIITests checks the bitmap against the list.
    @inline(__always)
    static func isAuthorityByte(_ byte: UInt8) -> Bool {
        isIn(byte, below64: 0x2FFF_7FF2_0000_0000, from64: 0x47FF_FFFE_AFFF_FFFE)
    }

    /// Whether `byte` is in a set of ASCII bytes given as a bitmap (bit n of `below64` is
    /// byte n, of `from64` byte 64 + n): one shift and one test per byte, where a switch
    /// compiled to a jump table was the decoder's hottest loop.
    @inline(__always)
    private static func isIn(_ byte: UInt8, below64: UInt64, from64: UInt64) -> Bool {
        let word = byte < 64 ? below64 : from64
        return byte < 128 && (word >> UInt64(byte & 63)) & 1 != 0
    }

    /// RFC 9110 §5.5: field-vchar, SP and HTAB; obs-text (0x80–0xFF) is allowed by the
    /// grammar. Every other control byte, above all CR, LF and NUL, is refused: they are
    /// what header injection and smuggling through lenient peers are made of.
    @inline(__always)
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == htab || (byte >= sp && byte != 0x7F)
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == sp || byte == htab
    }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte &- zero < 10
    }

    /// The value of a hex digit, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte &- 0x30
        case 0x41...0x46: byte &- 0x41 &+ 10
        case 0x61...0x66: byte &- 0x61 &+ 10
        default: nil
        }
    }

    @inline(__always)
    static func lowercase(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Whether `bytes[range]` equals `lowercased` ignoring ASCII case. `lowercased` must
    /// be all lowercase. Inlined, so that a first byte that differs, the usual outcome
    /// when a name is classified, costs no call.
    @inline(__always)
    static func equalsCaseInsensitive(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ lowercased: StaticString) -> Bool {
        guard range.count == lowercased.utf8CodeUnitCount else { return false }
        guard let base = bytes.baseAddress, !range.isEmpty else { return range.isEmpty }
        // The first byte turns most other names away before a word is loaded.
        guard lowercase(bytes[range.lowerBound]) == lowercased.utf8Start.pointee else { return false }
        return equalsCaseInsensitive(base + range.lowerBound, UnsafeRawPointer(lowercased.utf8Start), count: range.count,
                                     rhsIsLowercase: true)
    }

    /// ASCII case-insensitive equality of two runs of bytes.
    static func equalsCaseInsensitive(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return true }
        return equalsCaseInsensitive(left, right, count: lhs.count)
    }

    /// ASCII case-insensitive equality of two strings, byte by byte, no allocation.
    static func equalsCaseInsensitive(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        let contiguous = left.withContiguousStorageIfAvailable { l in
            right.withContiguousStorageIfAvailable { r in
                equalsCaseInsensitive(UnsafeRawBufferPointer(l), UnsafeRawBufferPointer(r))
            }
        }
        if let contiguous = contiguous ?? nil { return contiguous }
        return zip(left, right).allSatisfy { lowercase($0) == lowercase($1) }
    }

    /// The elements of a comma-separated list (RFC 9110 §5.6.1), each trimmed of OWS,
    /// empty elements skipped as the RFC asks recipients to. Inlined, with the caller's
    /// handling of each element.
    @inline(__always)
    static func forEachListElement<E: Error>(
        _ bytes: UnsafeRawBufferPointer,
        _ range: Range<Int>,
        _ body: (Range<Int>) throws(E) -> Void
    ) throws(E) {
        var start = range.lowerBound
        while start <= range.upperBound {
            var end = start
            while end < range.upperBound, bytes[end] != comma { end += 1 }
            let element = trimmed(bytes, start..<end)
            if !element.isEmpty { try body(element) }
            start = end + 1
        }
    }

    /// `range` without leading and trailing SP/HTAB.
    @inline(__always)
    static func trimmed(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    /// The bytes as a `String`. Callers have checked them to be ASCII or accept
    /// replacement of invalid UTF-8, which this initializer repairs as
    /// `String(decoding:as:)` does; it costs some 70 instructions less for a short value
    /// (a Host, a target), made for every request.
    @inline(__always)
    static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(unsafeUninitializedCapacity: range.count) { utf8 in
            UnsafeMutableRawBufferPointer(utf8).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[range]))
            return range.count
        }
    }

    /// The bytes as a `String` if they are valid UTF-8, else nil.
    @inline(__always)
    static func validatedString(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String? {
        UnsafeRawBufferPointer(rebasing: bytes[range]).withMemoryRebound(to: UInt8.self) {
            String(validating: $0, as: UTF8.self)
        }
    }
}
