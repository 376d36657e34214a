import LatchkeyHTTP

/// Whether a browser request comes from a site that may spend the credentials of a route.
/// Browsers send one `Origin` and one `Sec-Fetch-Site` (Fetch metadata); a request with
/// two is not a browser's, and is refused rather than judged by its first line.
enum BrowserOriginCheck {
    enum Verdict: Equatable {
        case allowed
        /// More than one line of this header.
        case ambiguous(String)
        /// Sent by another site, or by a page on another port of this host.
        case otherSite
    }

    /// Known names (`FieldName`): every request on a route that injects is judged, and
    /// most have neither, which one pass over the fields' classes says.
    private static let browserNames = HTTPFields.NameSet([.origin, .secFetchSite])

    /// `overTLS`: the client reached the proxy over TLS (a TLS listener, or an intercepted
    /// tunnel), where the request's own origin is https.
    static func judge(_ fields: HTTPFields, host: String?, policy: ListenerPolicy, overTLS: Bool) -> Verdict {
        // Not a browser's request (curl, an SDK): nothing to judge, nothing to allocate.
        guard fields.containsAny(of: browserNames) else { return .allowed }
        for name in [HTTPField.Name.origin, .secFetchSite] where fields.values(named: name).count > 1 { return .ambiguous(name.text) }
        if let origin = fields[.origin], policy.allowedOrigins.contains(origin.lowercased()) { return .allowed }
        // Fetch metadata: `same-site` is a page on another port of the same host (all of
        // localhost is one site), which is another origin to every browser check.
        if policy.refusesSameSite, fields[.secFetchSite]?.lowercased() == "same-site" { return .otherSite }
        return CrossSiteCheck.isCrossSite(fields, host: host, overTLS: overTLS) ? .otherSite : .allowed
    }
}
