/// The upstream base URL taken apart once.
public struct UpstreamTarget: Sendable, Equatable {
    /// "http" or "https".
    public let scheme: String
    /// host[:port] exactly as configured (used for Host and for recognising Location).
    public let authority: String
    /// Base path without a trailing slash ("" for none).
    public let basePath: String

    /// `scheme://authority`, made once: every request's starts with it.
    public let origin: String

    public init?(url: String) {
        guard let schemeEnd = url.firstRange(of: "://") else { return nil }
        scheme = url[..<schemeEnd.lowerBound].lowercased()
        let rest = url[schemeEnd.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        authority = String(rest[..<slash])
        var path = String(rest[slash...])
        while path.hasSuffix("/") { path.removeLast() }
        basePath = path
        guard scheme == "http" || scheme == "https", !authority.isEmpty else { return nil }
        origin = scheme + "://" + authority
    }
}
