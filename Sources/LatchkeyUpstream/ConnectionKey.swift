/// What makes two raw upstream connections interchangeable in the pool: the origin they
/// reach and every option that shapes the connection itself — the CA bundle it was verified
/// against, the client certificate it presented, the proxy it goes through, the destination
/// guard. Timeouts and the request's own settings are not part of it: they apply to each
/// exchange, not to the connection.
///
/// Made once per route (`UpstreamRequest.connectionKey`) and hashed once: the pool looks it
/// up twice per request. A class, so that a request, a transfer and a pooled connection
/// share one rather than each copying (and retaining) its five strings; it compares by value.
public final class ConnectionKey: Hashable, Sendable {
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

    public static func == (lhs: ConnectionKey, rhs: ConnectionKey) -> Bool {
        lhs === rhs
            || (lhs.hash == rhs.hash && lhs.origin == rhs.origin && lhs.caFile == rhs.caFile
                && lhs.clientCertificateFile == rhs.clientCertificateFile && lhs.clientKeyFile == rhs.clientKeyFile
                && lhs.proxy == rhs.proxy && lhs.refusesLocalDestinations == rhs.refusesLocalDestinations)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    /// The options a connection for this key is made with, `connectTimeout` the request's.
    func connectionOptions(connectTimeout: Duration) -> UpstreamOptions {
        UpstreamOptions(caFile: caFile, clientCertificateFile: clientCertificateFile, clientKeyFile: clientKeyFile,
                        proxy: proxy, connectTimeout: connectTimeout, refusesLocalDestinations: refusesLocalDestinations)
    }
}
