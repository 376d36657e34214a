import LatchkeyHTTP
import LatchkeyServer
import LatchkeyUpstream

/// A CONNECT to one of a forward listener's `tunnel:` hosts: the upstream connection is
/// made first (through libcurl, which refuses loopback, link-local and metadata addresses
/// here), so that a destination that cannot be reached is answered 403, 502 or 504 rather
/// than a `200` followed by a cut; then the `200` and the relay. One access-log line when
/// the tunnel ends, with its bytes each way and how it ended.
final class TunnelRelay: ExchangeHandler, UpstreamConnectionDelegate {
    private let exchange: ServerExchange
    private let authority: TargetAuthority
    private unowned let handler: ProxyHandler
    private let context: ProxyContext
    /// While the connection is being made; the server owns it once the tunnel is open.
    private var connecting: UpstreamConnection?

    /// No credential, no route: a client-named destination, which the guard must check.
    static let options = UpstreamOptions(connectTimeout: .seconds(10), firstByteTimeout: .zero, idleTimeout: .zero,
                                         refusesLocalDestinations: true)

    init(exchange: ServerExchange, authority: TargetAuthority, handler: ProxyHandler, context: ProxyContext) {
        self.exchange = exchange
        self.authority = authority
        self.handler = handler
        self.context = context
    }

    func start() {
        connecting = handler.upstream.connect(to: "http://\(authority.description)/", options: Self.options, delegate: self)
        if connecting == nil { fail(UpstreamError(.other, detail: "curl_easy_init failed")) }
    }

    func upstreamConnected(_ connection: UpstreamConnection) {
        connecting = nil
        exchange.openTunnel(.relay(connection))
    }

    func upstreamConnectFailed(_ connection: UpstreamConnection, error: UpstreamError) {
        connecting = nil
        fail(error)
    }

    private func fail(_ error: UpstreamError) {
        guard error.code == .destinationRefused else {
            return handler.conclude(exchange, .upstreamFailed(error, headSent: false, upstreamTime: nil), in: context)
        }
        context.logger.warning("tunnel refused", metadata: ["host": .string(authority.host), "detail": .string(error.detail)])
        handler.conclude(exchange, .refused(ErrorDocument(upstreamFailure: error, route: nil, host: authority.host),
                                            outcome: "destination_refused"), in: context)
    }

    func tunnelEnded(_ end: TunnelEnd) {
        let outcome = switch end {
        case .closed: "relay_closed"
        case .idle: "relay_idle"
        case .failed: "relay_failed"
        case .shutdown: "relay_shutdown"
        }
        handler.conclude(exchange, .tunneled(outcome: outcome), in: context)
    }

    func exchangeAborted(_ reason: ExchangeEnd) {
        connecting?.close()
        connecting = nil
    }

    // A CONNECT has no body, and the relay's bytes never come through the handler.
    func requestBody(_ bytes: UnsafeRawBufferPointer) {}
    func requestBodyEnded() {}
    func responseDrained() {}
}
