/// An origin-form request target (RFC 9112 §3.2.1) split into path and query. Targets with
/// dot-segments, plain or percent-encoded, are refused: libcurl would resolve them and a
/// request could climb out of the route's base path with the route's credential attached.
struct RequestTarget {
    let path: Substring
    let query: Substring?

    init?(_ target: String) {
        guard target.first == "/" else { return nil }
        let mark = target.utf8.firstIndex(of: UInt8(ascii: "?"))
        let path = target[..<(mark ?? target.endIndex)]
        if let mark { query = target[target.index(after: mark)...] } else { query = nil }
        guard !Self.hasDotSegment(path.utf8) else { return nil }
        self.path = path
    }

    /// Scans the path once, segment by segment, decoding only "%2e" (RFC 3986 §2.3: it is
    /// an unreserved character, so servers treat it as ".").
    private static func hasDotSegment(_ path: Substring.UTF8View) -> Bool {
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
