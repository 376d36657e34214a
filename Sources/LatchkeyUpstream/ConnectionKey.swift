/// What makes two raw upstream connections interchangeable in the pool: the origin they
/// reach and every option that shapes the connection itself — the CA bundle it was verified
/// against, the client certificate it presented, the proxy it goes through, the destination
/// guard. Timeouts and the request's own settings are not part of it: they apply to each
/// exchange, not to the connection.
///
/// Made once per route (`UpstreamRequest.connectionKey`) and hashed once: the pool looks it
/// up twice per request.
public struct ConnectionKey: Hashable, Sendable {
    /// First, so that the synthesized `==` compares it first.
    private let hash: Int
    /// `scheme://authority`, lowercased (RFC 3986 §6.2.2.1: case-insensitive parts).
    let origin: String
    let caFile: String?
    let clientCertificateFile: String?
    let clientKeyFile: String?
    let proxy: String?
    let refusesLocalDestinations: Bool

    public init(origin: some StringProtocol, options: UpstreamOptions) {
        self.origin = origin.lowercased()
        caFile = options.caFile
        clientCertificateFile = options.clientCertificateFile
        clientKeyFile = options.clientKeyFile
        proxy = options.proxy
        refusesLocalDestinations = options.refusesLocalDestinations
        var hasher = Hasher()
        hasher.combine(self.origin)
        hasher.combine(caFile)
        hasher.combine(clientCertificateFile)
        hasher.combine(clientKeyFile)
        hasher.combine(proxy)
        hasher.combine(refusesLocalDestinations)
        hash = hasher.finalize()
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}
