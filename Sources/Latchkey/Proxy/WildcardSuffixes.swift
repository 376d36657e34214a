/// The suffixes of a host name under which a `HostPattern.subdomains` would cover it, each
/// from a '.' past its first byte: "a.b.example.com" → ".b.example.com", ".example.com",
/// ".com". A wildcard covers the names under its domain, never the domain itself, so the
/// name whole is not one of them. Looking these up replaces trying every wildcard.
struct WildcardSuffixes: Sequence, IteratorProtocol {
    private let host: Substring
    private var position: Substring.Index

    /// `host`: lower-cased, without port.
    init(_ host: Substring) {
        self.host = host
        position = host.utf8.index(host.startIndex, offsetBy: 1, limitedBy: host.endIndex) ?? host.endIndex
    }

    mutating func next() -> Substring? {
        guard let dot = host.utf8[position...].firstIndex(of: UInt8(ascii: ".")) else { return nil }
        position = host.utf8.index(after: dot)
        return host[dot...]
    }
}
