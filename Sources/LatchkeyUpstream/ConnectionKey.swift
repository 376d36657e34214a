/// What makes two raw upstream connections interchangeable in the pool: the origin they
/// reach and every option that shapes the connection itself — the CA bundle it was verified
/// against, the client certificate it presented, the proxy it goes through, the destination
/// guard. Timeouts and the request's own settings are not part of it: they apply to each
/// exchange, not to the connection.
struct ConnectionKey: Hashable {
    /// `scheme://authority`, lowercased (RFC 3986 §6.2.2.1: case-insensitive parts).
    let origin: String
    let caFile: String?
    let clientCertificateFile: String?
    let clientKeyFile: String?
    let proxy: String?
    let refusesLocalDestinations: Bool

    init(origin: Substring, options: UpstreamOptions) {
        self.origin = origin.lowercased()
        caFile = options.caFile
        clientCertificateFile = options.clientCertificateFile
        clientKeyFile = options.clientKeyFile
        proxy = options.proxy
        refusesLocalDestinations = options.refusesLocalDestinations
    }
}
