import LatchkeyAuth

/// The names of the query parameters (or cookies) a route injects, compared as an upstream
/// may read a name, so that every client value an upstream could take for the injected one
/// is removed. Compared raw, `?api%5Fkey=X`, `?api_key[]=X`, `?x=1;api_key=X` or a cookie
/// `sess =X` would pass next to the injected `api_key` or `sess`, and an upstream reading
/// the first value (or an array) would use the client's.
///
/// A name is read the way the common server stacks decode it (PHP, Rails/Rack, Node's qs,
/// Java servlets, ASP.NET): percent-decoded, `+` as a space (HTML's form encoding),
/// repeatedly (a proxy in front may have decoded once already); cut at a NUL (C strings) and
/// at `[` (`name[]`, `name[0]`, `name[key]` are arrays and maps of `name`); surrounding
/// whitespace trimmed (RFC 6265 §5.2 for cookies); `.` and space inside as `_` (PHP);
/// ASCII case ignored (ASP.NET). A client parameter that merely differs in case from an
/// injected one is dropped too, the price of being safe.
struct InjectedNames: Sendable {
    private let canonicalNames: Set<[UInt8]>

    init(_ names: some Sequence<String>) {
        canonicalNames = Set(names.map { Self.canonical($0) })
    }

    var isEmpty: Bool { canonicalNames.isEmpty }

    /// Whether an upstream may read `item`'s name (up to its `=`) as an injected name.
    func matches(_ item: Substring) -> Bool {
        canonicalNames.contains(Self.canonical(QueryString.name(of: item)))
    }

    /// `item` without its parts (between `separator`s) whose name matches: the separator
    /// the proxy did not split at, but an upstream may (`;` in a query, HTML 4.01 §B.2.2;
    /// `,` in a Cookie field, RFC 2965 §3.3.4). Kept parts are unchanged; nil when nothing
    /// is kept.
    func removingMatches(from item: Substring, splitAt separator: Character) -> Substring? {
        guard item.contains(separator) else { return matches(item) ? nil : item }
        let parts = item.split(separator: separator, omittingEmptySubsequences: false)
        let kept = parts.filter { !matches($0) }
        if kept.count == parts.count { return item }
        return kept.isEmpty ? nil : Substring(kept.joined(separator: String(separator)))
    }

    /// `name` as an upstream reads it, in the canonical spelling compared above.
    static func canonical(_ name: some StringProtocol) -> [UInt8] {
        // Decoding until nothing changes: `%255F` is `%5F` to one decoder and `_` to two.
        var text = String(name)
        while case let decoded = FormEncoding.decodeComponent(text), decoded != text { text = decoded }
        var bytes = Array(text.utf8)
        if let cut = bytes.firstIndex(where: { $0 == 0 || $0 == UInt8(ascii: "[") }) {
            bytes.removeSubrange(cut...)
        }
        while let last = bytes.last, isWhitespace(last) { bytes.removeLast() }
        let start = bytes.firstIndex { !isWhitespace($0) } ?? bytes.endIndex
        return bytes[start...].map { byte in
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: " "): UInt8(ascii: "_")
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte + 32
            default: byte
            }
        }
    }

    /// HTML's ASCII whitespace plus vertical tab, which C's isspace (and so PHP) trims.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}
