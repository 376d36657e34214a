import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyServer
import LatchkeyUpstream
import Logging

/// One proxied request: the client's side (`ServerExchange`) joined to the upstream's
/// (`UpstreamTransfer`), with backpressure passed both ways. Lives on one loop.
///
/// On a route that injects an identity's token, the transfer may start only once the
/// token is there, and may be replaced once: when the upstream refuses the token, the
/// exchange renews it and replays the request (see ProxyExchange+Renewal.swift).
final class ProxyExchange: ExchangeHandler, UpstreamTransferDelegate {
    let exchange: ServerExchange
    let route: Route
    let rewriter: ResponseRewriter
    /// The loop's handler outlives every exchange on it.
    unowned(unsafe) let handler: ProxyHandler
    /// The configuration the request started with, kept to its end through any reload.
    let context: ProxyContext
    let blueprint: RequestBlueprint
    let identity: Identity?
    var token: IssuedToken?
    var body: RequestBodyRecord
    var transfer: UpstreamTransfer?
    /// The request was sent again with a renewed token: a second refusal goes to the client.
    var replayed = false
    /// Set when the upstream refused a navigation and the browser is being handed a session.
    var handoff: HandoffExchange?
    private var headSent = false
    var done = false

    /// Request-body bytes queued for the upstream above which the client is not read.
    private static let requestHighWater = 256 * 1024

    init(exchange: ServerExchange, route: Route, rewriter: ResponseRewriter, handler: ProxyHandler, context: ProxyContext,
         blueprint: RequestBlueprint, identity: Identity?) {
        self.exchange = exchange
        self.route = route
        self.rewriter = rewriter
        self.handler = handler
        self.context = context
        self.blueprint = blueprint
        self.identity = identity
        // Sent again after a token renewal, or after a handoff has filled the proxy's jar.
        let replayable = identity?.renewable == true || (route.keepsCookies && route.handoff != nil)
        let declaredLength: UInt64? = if case .length(let length) = exchange.head.framing { length } else { nil }
        body = RequestBodyRecord(replayLimit: replayable ? route.renewal.replayLimit : nil, declaredLength: declaredLength)
    }

    /// Starts the upstream transfer with `token` (nil on routes without an identity), and
    /// hands it the body bytes that are already here.
    func startTransfer(token: IssuedToken?) {
        self.token = token
        let transfer = handler.upstream.start(blueprint.request(for: route, token: token, jar: cookieJar), delegate: self)
        self.transfer = transfer
        let pending = body.forNewTransfer()
        if !pending.isEmpty { pending.withUnsafeBytes { transfer.sendBody($0) } }
        if body.ended { transfer.finishBody() }
    }

    // MARK: client → upstream

    func requestBody(_ bytes: UnsafeRawBufferPointer) {
        body.append(bytes, sent: transfer != nil)
        guard let transfer else {
            // Waiting for a token: hold what is already read, read no more.
            exchange.pauseRequestBody()
            return
        }
        transfer.sendBody(bytes)
        if transfer.queuedBodyBytes >= Self.requestHighWater { exchange.pauseRequestBody() }
    }

    func requestBodyEnded() {
        body.end()
        transfer?.finishBody()
    }

    func upstreamWantsBody(_ transfer: UpstreamTransfer) {
        exchange.resumeRequestBody()
    }

    // MARK: upstream → client

    func upstreamDidReceiveHead(_ transfer: UpstreamTransfer, status: Int, fields: HTTPFields) {
        guard !done else { return }
        var fields = fields
        if status == 401, let settings = route.handoff, let caller = context.handoffCaller {
            // The proxy's jar lacks the session: the handoff fills it, the request goes again.
            if route.keepsCookies {
                if !replayed, body.complete { return refillJar(after: transfer, settings: settings, caller: caller) }
            } else if BrowserNavigation.isNavigation(exchange.head) {
                // A page that wants a web session: the browser gets one, not a renewed token.
                return handOff(after: transfer, settings: settings, caller: caller)
            }
        }
        if identity != nil, !replayed, route.renewal.refuses(status: status, fields: fields) {
            guard renewAfterRefusal(of: transfer) else { return }
            fields.append(name: "Latchkey-Token-Renewed", value: "true")
        }
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
        if route.keepsCookies, fields.contains("Set-Cookie") {
            // curl's cookie engine has taken them into the jar; the client needs none.
            fields.removeAll(named: "Set-Cookie")
            identity?.cookiesChanged()
        }
        rewriter.rewrite(&fields)
        if route.handoff != nil, HandoffMarks.presentsGuard(exchange.head.fields) {
            fields.append(name: "Set-Cookie", value: HandoffMarks.clearingGuard(route: route))
        }
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
            metrics.upstreamFailed(error.code)
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
            if let upstreamTime = transfer.upstreamTime { metrics.upstreamCompleted(after: upstreamTime) }
        }
        handler.record(exchange, route: route, in: context, upstreamTime: transfer.upstreamTime, outcome: error.map { "upstream_\($0.code)" })
    }

    func exchangeAborted(_ reason: ExchangeEnd) {
        handoff?.exchangeAborted(reason)
        guard !done else { return }
        done = true
        let transfer = self.transfer
        self.transfer = nil
        transfer?.cancel()
        // A rejected request body is logged once, by the server's own answer.
        guard case .clientGone = reason else { return }
        handler.record(exchange, route: route, in: context, upstreamTime: transfer?.upstreamTime, outcome: "client_gone")
    }

    /// Answers the client from the proxy itself (no upstream response was relayed).
    func answer(_ document: ErrorDocument, extraFields: HTTPFields = HTTPFields(), outcome: String) {
        done = true
        var fields = document.fields
        for field in extraFields { fields.append(name: field.name, value: field.value) }
        exchange.respond(status: document.status, fields: fields, body: document.body)
        context.metrics.refused(document.error)
        handler.record(exchange, route: route, in: context, outcome: outcome)
    }

    /// The identity's jar on a route with `jar: proxy`.
    var cookieJar: CookieJar? { route.keepsCookies ? identity?.cookieJar : nil }

    /// This route's series.
    var metrics: RouteMetrics { context.metrics.routes[route.index] }
}

/// The handler for requests answered locally: there is no body to forward.
final class LocalAnswer: ExchangeHandler, Sendable {
    static let shared = LocalAnswer()
    func requestBody(_ bytes: UnsafeRawBufferPointer) {}
    func requestBodyEnded() {}
    func responseDrained() {}
    func exchangeAborted(_ reason: ExchangeEnd) {}
}
