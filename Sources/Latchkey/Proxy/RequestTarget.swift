/// An origin-form request target (RFC 9112 §3.2.1) split into path and query. Targets with
/// dot-segments, plain or percent-encoded, are refused: libcurl would resolve them and a
/// request could climb out of the route's base path with the route's credential attached.
struct RequestTarget {
    let path: Substring
    let query: Substring?

    init?(_ target: String) {
        let utf8 = target.utf8
        guard utf8.first == UInt8(ascii: "/") else { return nil }
        // The query's mark found over the bytes in place, as the dot-segments below.
        let mark = utf8.withContiguousStorageIfAvailable { bytes in
            bytes.firstIndex(of: UInt8(ascii: "?")).map { utf8.index(utf8.startIndex, offsetBy: $0) }
        } ?? utf8.firstIndex(of: UInt8(ascii: "?"))
        let path = target[..<(mark ?? target.endIndex)]
        if let mark { query = target[target.index(after: mark)...] } else { query = nil }
        // Over the bytes in place: a Substring's UTF8View iterator cost several times more.
        let dotSegment = path.utf8.withContiguousStorageIfAvailable(Self.hasDotSegment)
            ?? Array(path.utf8).withUnsafeBufferPointer(Self.hasDotSegment)
        guard !dotSegment else { return nil }
        self.path = path
    }

    /// Scans the path once, segment by segment, decoding only "%2e" (RFC 3986 §2.3: it is
    /// an unreserved character, so servers treat it as ".").
    private static func hasDotSegment(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
        var dots = 0
        var other = false
        var iterator = path.makeIterator()
        var pending: UInt8? = iterator.next()
        while let byte = pending {
            pending = iterator.next()
            switch byte {
            case UInt8(ascii: "/"):
                if !other && (dots == 1 || dots == 2) { return true }
                dots = 0
                other = false
            case UInt8(ascii: "."):
                dots += 1
            case UInt8(ascii: "%"):
                let high = pending
                let low = iterator.next()
                pending = iterator.next()
                if high == UInt8(ascii: "2"), low == UInt8(ascii: "e") || low == UInt8(ascii: "E") {
                    dots += 1
                } else {
                    other = true
                }
            default:
                other = true
            }
        }
        return !other && (dots == 1 || dots == 2)
    }
}
