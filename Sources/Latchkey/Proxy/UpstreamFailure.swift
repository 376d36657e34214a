import LatchkeyServer
import LatchkeyUpstream

extension ErrorDocument {
    /// The one mapping from an upstream failure to what the client is told: timeouts are
    /// 504, everything else that kept us from an answer is 502. curl's detail goes to the
    /// log, not to the client. `host`: the destination a forward-proxy client named.
    init(upstreamFailure error: UpstreamError, route: String?, host: String? = nil) {
        switch error.code {
        case .connectTimeout:
            self.init(status: 504, error: "upstream_timeout", message: "connecting to the upstream timed out", route: route, host: host)
        case .firstByteTimeout:
            self.init(status: 504, error: "upstream_timeout", message: "the upstream did not answer in time", route: route, host: host)
        case .idleTimeout:
            self.init(status: 504, error: "upstream_timeout", message: "the upstream stopped sending", route: route, host: host)
        case .resolveFailed:
            self.init(status: 502, error: "upstream_unreachable", message: "the upstream's host name could not be resolved", route: route, host: host)
        case .connectFailed:
            self.init(status: 502, error: "upstream_unreachable", message: "the upstream refused or dropped the connection", route: route, host: host)
        case .tls:
            self.init(status: 502, error: "upstream_tls", message: "the TLS handshake with the upstream failed", route: route, host: host)
        case .sendFailed, .receiveFailed:
            self.init(status: 502, error: "upstream_reset", message: "the upstream connection failed mid-request", route: route, host: host)
        case .destinationRefused:
            // The resolved address goes to the log; the client is told the rule.
            self.init(status: 403, error: "destination_not_allowed",
                      message: "the destination resolves to a loopback, link-local or cloud metadata address, which only a route may name",
                      route: route, host: host)
        case .cancelled, .other:
            self.init(status: 502, error: "bad_gateway", message: "the upstream request failed", route: route, host: host)
        }
    }
}
