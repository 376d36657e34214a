/// An origin-form request target (RFC 9112 §3.2.1) split into path and query. Targets with
/// dot-segments, plain or percent-encoded, are refused: libcurl would resolve them and a
/// request could climb out of the route's base path with the route's credential attached.
struct RequestTarget {
    let path: Substring
    let query: Substring?

    init?(_ target: String) {
        // The query's mark and the dot-segments found in one visit of the bytes in place: a
        // Substring's views cost several times more.
        let scanned = target.utf8.withContiguousStorageIfAvailable(Self.scan) ?? Array(target.utf8).withUnsafeBufferPointer(Self.scan)
        guard let (mark, dotSegment) = scanned, !dotSegment else { return nil }
        guard let mark else {
            path = target[...]
            query = nil
            return
        }
        let markIndex = target.utf8.index(target.utf8.startIndex, offsetBy: mark)
        path = target[..<markIndex]
        query = target[target.utf8.index(after: markIndex)...]
    }

    /// Where the query's mark is (nil without one), and whether the path before it has a
    /// dot-segment; nil for a target that does not start with '/'.
    private static func scan(_ target: UnsafeBufferPointer<UInt8>) -> (mark: Int?, dotSegment: Bool)? {
        guard target.first == UInt8(ascii: "/") else { return nil }
        let mark = target.firstIndex(of: UInt8(ascii: "?"))
        return (mark, hasDotSegment(UnsafeBufferPointer(rebasing: target[..<(mark ?? target.count)])))
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
