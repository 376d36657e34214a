/// A `Host` value or an `allowed_hosts` entry split at its port: "api.local:8443" →
/// ("api.local", "8443"), "[::1]:8080" → ("[::1]", "8080"), "localhost" → ("localhost",
/// nil). Searches the UTF-8 bytes: a `Character` search walks grapheme clusters, and this
/// runs for every request on a listener whose routes name hosts.
public enum HostAuthority {
    public static func split(_ authority: String) -> (host: Substring, port: Substring?) {
        let utf8 = authority.utf8
        var end = authority.startIndex
        if utf8.first == UInt8(ascii: "[") {
            guard let close = utf8.firstIndex(of: UInt8(ascii: "]")) else { return (Substring(authority), nil) }
            end = authority.index(after: close)
        }
        guard let colon = utf8[end...].firstIndex(of: UInt8(ascii: ":")) else { return (Substring(authority), nil) }
        return (authority[..<colon], authority[authority.index(after: colon)...])
    }
}
