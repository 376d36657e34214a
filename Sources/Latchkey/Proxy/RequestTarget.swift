/// An origin-form request target (RFC 9112 §3.2.1) split into path and query. Targets with
/// dot-segments, plain or percent-encoded, are refused: libcurl would resolve them and a
/// request could climb out of the route's base path with the route's credential attached.
struct RequestTarget {
    let path: Substring
    let query: Substring?

    init?(_ target: String) {
        guard target.first == "/" else { return nil }
        let mark = target.firstIndex(of: "?")
        let path = target[..<(mark ?? target.endIndex)]
        if let mark { query = target[target.index(after: mark)...] } else { query = nil }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            if Self.isDotSegment(segment) { return nil }
        }
        self.path = path
    }

    private static func isDotSegment(_ segment: Substring) -> Bool {
        guard !segment.isEmpty, segment.count <= 6 else { return false }
        let decoded = segment.lowercased().replacingOccurrences("%2e", with: ".")
        return decoded == "." || decoded == ".."
    }

    /// "example.com:8080" → "example.com"; "[::1]:8080" → "[::1]".
    static func hostWithoutPort(_ host: String) -> Substring {
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return Substring(host) }
            return host[...close]
        }
        return host[..<(host.firstIndex(of: ":") ?? host.endIndex)]
    }
}

extension String {
    /// Replaces every occurrence of `target`; Foundation-free.
    func replacingOccurrences(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound]
            out += replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
