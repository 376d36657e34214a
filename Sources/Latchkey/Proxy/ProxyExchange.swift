import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyServer
import LatchkeyUpstream
import Logging

/// One proxied request: the client's side (`ServerExchange`) joined to the upstream's
/// (`UpstreamTransfer`), with backpressure passed both ways. Lives on one loop.
final class ProxyExchange: ExchangeHandler, UpstreamTransferDelegate {
    private let exchange: ServerExchange
    private let route: Route
    private let rewriter: ResponseRewriter
    /// The loop's handler outlives every exchange on it.
    private unowned(unsafe) let handler: ProxyHandler
    private var transfer: UpstreamTransfer?
    private var headSent = false
    private var done = false

    /// Request-body bytes queued for the upstream above which the client is not read.
    private static let requestHighWater = 256 * 1024

    init(exchange: ServerExchange, route: Route, rewriter: ResponseRewriter, handler: ProxyHandler) {
        self.exchange = exchange
        self.route = route
        self.rewriter = rewriter
        self.handler = handler
    }

    func start(_ request: UpstreamRequest) {
        transfer = handler.upstream.start(request, delegate: self)
    }

    // MARK: client → upstream

    func requestBody(_ bytes: UnsafeRawBufferPointer) {
        guard let transfer else { return }
        transfer.sendBody(bytes)
        if transfer.queuedBodyBytes >= Self.requestHighWater { exchange.pauseRequestBody() }
    }

    func requestBodyEnded() {
        transfer?.finishBody()
    }

    func upstreamWantsBody(_ transfer: UpstreamTransfer) {
        exchange.resumeRequestBody()
    }

    // MARK: upstream → client

    func upstreamDidReceiveHead(_ transfer: UpstreamTransfer, status: Int, fields: HTTPFields) {
        guard !done else { return }
        var fields = fields
        // The client's framing must be the one libcurl used to read the body (RFC 9112
        // §6.3): Transfer-Encoding wins over Content-Length, and lengths that disagree
        // or are not plain digits are a broken upstream, never forwarded as they are.
        if fields.contains("Transfer-Encoding") {
            fields.removeAll(named: "Content-Length")
        } else {
            // Only checked here; the server writes the one canonical line when it frames.
            do {
                _ = try fields.contentLength()
            } catch {
                return failUpstream(transfer, UpstreamError(.other, detail: "the response's Content-Length is invalid or conflicting"))
            }
        }
        fields.removeHopByHop()
        rewriter.rewrite(&fields)
        if let via = route.via {
            let hop = "1.1 \(via)"
            if let existing = fields["Via"] { fields.set(name: "Via", value: existing + ", " + hop) } else { fields.append(name: "Via", value: hop) }
        }
        headSent = true
        exchange.sendHead(status: status, fields: fields)
    }

    func upstreamDidReceiveBody(_ transfer: UpstreamTransfer, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !done else { return true }
        return exchange.sendBody(bytes)
    }

    func responseDrained() {
        transfer?.resumeReceiving()
    }

    /// Gives up on a transfer that is still running (a response head that cannot be
    /// relayed): cancel it and answer as if it had failed so.
    private func failUpstream(_ transfer: UpstreamTransfer, _ error: UpstreamError) {
        transfer.cancel()
        upstreamDidFinish(transfer, error: error)
    }

    func upstreamDidFinish(_ transfer: UpstreamTransfer, error: UpstreamError?) {
        guard !done else { return }
        done = true
        self.transfer = nil
        if let error {
            handler.logger.warning("upstream failed", metadata: [
                "route": .string(route.name), "error": .string("\(error.code)"), "detail": .string(error.detail),
            ])
            if headSent {
                // Part of the body is already with the client: cut the response so that it
                // can tell, never a fake complete one.
                exchange.abort()
            } else {
                exchange.respond(ErrorDocument(upstreamFailure: error, route: route.name))
            }
        } else {
            exchange.finish()
        }
        handler.accessLog.record(exchange, route: route, now: handler.loop.now, upstreamTime: transfer.upstreamTime,
                                 outcome: error.map { "upstream_\($0.code)" })
    }

    func exchangeAborted(_ reason: ExchangeEnd) {
        guard !done else { return }
        done = true
        let transfer = self.transfer
        self.transfer = nil
        transfer?.cancel()
        // A rejected request body is logged once, by the server's own answer.
        guard case .clientGone = reason else { return }
        handler.accessLog.record(exchange, route: route, now: handler.loop.now, upstreamTime: transfer?.upstreamTime,
                                 outcome: "client_gone")
    }
}

/// The handler for requests answered locally: there is no body to forward.
final class LocalAnswer: ExchangeHandler, Sendable {
    static let shared = LocalAnswer()
    func requestBody(_ bytes: UnsafeRawBufferPointer) {}
    func requestBodyEnded() {}
    func responseDrained() {}
    func exchangeAborted(_ reason: ExchangeEnd) {}
}
