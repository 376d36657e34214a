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

    /// Whether a segment of the path is "." or "..", "%2e" read as a dot (RFC 3986 §2.3: it
    /// is an unreserved character, so servers treat it as "."). Only a segment that starts
    /// with "." or "%" can be one: the others cost the search for the next "/".
    private static func hasDotSegment(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        while let slash = path[start...].firstIndex(of: UInt8(ascii: "/")) {
            start = slash + 1
            guard start < path.count, path[start] == UInt8(ascii: ".") || path[start] == UInt8(ascii: "%") else { continue }
            if isDotSegment(path, from: start) { return true }
        }
        return false
    }

    /// Whether the segment at `start`, to the next "/" or the end, is one or two dots. A
    /// "%" that does not start "%2e" makes it another segment, without hiding a "/" after
    /// it: "/%/../x" has a ".." segment.
    private static func isDotSegment(_ path: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var dots = 0
        var index = start
        while index < path.count, path[index] != UInt8(ascii: "/") {
            if path[index] == UInt8(ascii: ".") {
                index += 1
            } else if path[index] == UInt8(ascii: "%"), index + 2 < path.count, path[index + 1] == UInt8(ascii: "2"),
                      path[index + 2] | 0x20 == UInt8(ascii: "e") {
                index += 3
            } else {
                return false
            }
            dots += 1
            if dots > 2 { return false }
        }
        return dots > 0
    }
}
