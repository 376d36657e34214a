/// How a transfer came by its upstream connections, for the metrics
/// (`latchkey_upstream_connections_total`, `latchkey_upstream_resends_total`).
public struct ConnectionUse: Sendable, Equatable {
    /// Connections opened for the transfer (a resend opens one more).
    public var opened = 0
    /// The request first went on a connection kept alive from an earlier exchange.
    public var reused = false
    /// The request went again on a new connection: the reused one failed before any answer
    /// (Latchkey's own HTTP/1.1 only; libcurl does not say when it does the same).
    public var resent = false

    public init(opened: Int = 0, reused: Bool = false, resent: Bool = false) {
        self.opened = opened
        self.reused = reused
        self.resent = resent
    }
}
