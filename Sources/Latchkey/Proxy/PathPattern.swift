import LatchkeyConfig

/// A path pattern of a route's `allow:` list, matched on the request path's bytes as sent
/// (nothing percent-decoded; matching is case-sensitive, as paths are: RFC 3986 §6.2.2.1):
/// - a segment without `*` matches the same segment;
/// - `*` matches any bytes within one segment, none included (`/repos/*/issues`);
/// - `**` as a whole segment matches any number of segments, none included, as in Ant and
///   gitignore: `/repos/**` matches `/repos`, `/repos/` and `/repos/a/b`, `/**/issues`
///   matches `/issues` and `/a/b/issues`, `/**` matches every path.
///
/// Compiled once (`ConfigValidator.allowPathProblem` has checked the text); matching
/// allocates nothing.
struct PathPattern: Sendable, Equatable {
    /// The pattern's bytes after its leading '/'.
    private let bytes: [UInt8]
    /// Each segment of `bytes`: a range of them, or nil for `**`.
    private let segments: [Range<Int>?]

    /// `text` starts with '/'.
    init(_ text: String) {
        bytes = Array(text.utf8.dropFirst())
        var segments: [Range<Int>?] = []
        var start = 0
        for end in bytes.indices where bytes[end] == Self.slash {
            segments.append(Self.segment(bytes, start..<end))
            start = end + 1
        }
        segments.append(Self.segment(bytes, start..<bytes.count))
        self.segments = segments
    }

    private static let slash = UInt8(ascii: "/")
    private static let star = UInt8(ascii: "*")

    private static func segment(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int>? {
        range.count == 2 && bytes[range.lowerBound] == star && bytes[range.lowerBound + 1] == star ? nil : range
    }

    /// `path`: the request's path, without query, starting with '/'.
    func matches(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
        guard path.first == Self.slash else { return false }
        // Segments are taken one at a time from `position`, the start of the next one
        // (past the path's end once the last one is taken). `**` matches any run of
        // segments the way `*` matches any run of bytes: the last one seen is retried with
        // one more segment when what follows it fails (the classic wildcard match, linear
        // for a single `**`).
        var position = 1
        var index = 0
        var globstar: (index: Int, resume: Int)?
        while position <= path.count {
            let end = Self.segmentEnd(path, from: position)
            if index < segments.count, let range = segments[index] {
                if Self.segmentMatches(bytes[range], path, position..<end) {
                    index += 1
                    position = end + 1
                    continue
                }
            } else if index < segments.count {
                globstar = (index, position)
                index += 1
                continue
            }
            guard let last = globstar else { return false }
            // `**` takes one more segment.
            let swallowed = Self.segmentEnd(path, from: last.resume) + 1
            globstar = (last.index, swallowed)
            index = last.index + 1
            position = swallowed
        }
        // The path is used up: what remains of the pattern must be `**` only.
        return segments[index...].allSatisfy { $0 == nil }
    }

    /// The index of the '/' ending the segment that starts at `start`, or the path's end.
    private static func segmentEnd(_ path: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var end = start
        while end < path.count, path[end] != slash { end += 1 }
        return end
    }

    /// One segment with `*` against one path segment: the classic wildcard match, where a
    /// `*` that fails later takes one more byte.
    private static func segmentMatches(_ pattern: ArraySlice<UInt8>, _ path: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        var p = pattern.startIndex, s = range.lowerBound
        var lastStar: (pattern: Int, subject: Int)?
        while s < range.upperBound {
            if p < pattern.endIndex, pattern[p] == star {
                lastStar = (p, s)
                p += 1
            } else if p < pattern.endIndex, pattern[p] == path[s] {
                p += 1
                s += 1
            } else if let star = lastStar {
                lastStar = (star.pattern, star.subject + 1)
                p = star.pattern + 1
                s = star.subject + 1
            } else {
                return false
            }
        }
        while p < pattern.endIndex, pattern[p] == star { p += 1 }
        return p == pattern.endIndex
    }
}
