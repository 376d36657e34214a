import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyServer
import LatchkeyUpstream
import Logging

/// One proxied request: the client's side (`ServerExchange`) joined to the upstream's
/// (`UpstreamTransfer`), with backpressure passed both ways. Lives on one loop.
///
/// Glue around `ExchangeMachine`, which decides: when the transfer starts (once the
/// identity's token is there), when it is replaced (a renewal or a refilled jar, once), when
/// the browser is handed off, how the exchange ends. This type feeds it the events and
/// performs its actions (ProxyExchange+Renewal.swift, ProxyExchange+Handoff.swift).
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
final class ProxyExchange: ExchangeHandler, UpstreamTransferDelegate, TokenWaiter {
    let exchange: ServerExchange
    let route: Route
    let rewriter: ResponseRewriter
    /// The loop's handler outlives every exchange on it.
    unowned(unsafe) let handler: ProxyHandler
    /// The configuration the request started with, kept to its end through any reload.
    let context: ProxyContext
    let blueprint: RequestBlueprint
    let identity: Identity?
    /// This route's series, looked up once.
    let metrics: RouteMetrics
    @exclusivity(unchecked) var machine: ExchangeMachine
    @exclusivity(unchecked) var token: IssuedToken?
    /// The running transfer: set exactly while the machine is `sending`.
    @exclusivity(unchecked) var transfer: UpstreamTransfer?
    /// Set when the upstream refused a navigation and the browser is being handed a session.
    @exclusivity(unchecked) var handoff: HandoffExchange?

    init(exchange: ServerExchange, route: Route, rewriter: ResponseRewriter, handler: ProxyHandler, context: ProxyContext,
         blueprint: RequestBlueprint, identity: Identity?) {
        self.exchange = exchange
        self.route = route
        self.rewriter = rewriter
        self.handler = handler
        self.context = context
        self.blueprint = blueprint
        self.identity = identity
        metrics = context.metrics.routes[route.index]
        machine = ExchangeMachine(plan: ExchangeMachine.Plan(route: route, identity: identity, head: exchange.head,
                                                             handoffCallable: context.handoffCaller != nil))
    }

    /// Starts the transfer at once when the route injects no identity or its identity has a
    /// token, else once the token request in flight (single-flight per identity) answers.
    /// A token that lacks a capture the route injects is not one it can use: the identity's
    /// answer says so (`tokenArrived`).
    func start() {
        let current = identity?.current()
        switch machine.start(tokenAtHand: route.canInject(current)) {
        case .startTransfer(let start): startTransfer(start, token: current)
        case .waitForToken: wait { self.identity?.demand($0) }
        }
    }

    /// Starts an upstream transfer with `token` (nil on routes without an identity), and
    /// hands it the body bytes that are already here.
    func startTransfer(_ start: ExchangeMachine.Start, token: IssuedToken?) {
        self.token = token
        // Read through a local reference, the head is lent to the builder; read through
        // `self`, it was copied for the call (its strings and arrays retained and released).
        let exchange = exchange
        let transfer = handler.upstream.start(blueprint.request(for: route, head: exchange.head, token: token, jar: cookieJar), on: route.upstreamPath, delegate: self)
        self.transfer = transfer
        if !start.pendingBody.isEmpty { start.pendingBody.withUnsafeBytes { transfer.sendBody($0) } }
        if start.bodyEnded { transfer.finishBody() }
    }

    // MARK: client → upstream

    func requestBody(_ bytes: UnsafeRawBufferPointer) {
        switch machine.requestBody(bytes) {
        case .forward:
            guard let transfer else { return }
            transfer.sendBody(bytes)
            if transfer.queuedBodyBytes >= UpstreamBody.highWater { exchange.pauseRequestBody() }
        case .hold:
            exchange.pauseRequestBody()
        }
    }

    func requestBodyEnded() {
        if machine.requestBodyEnded() { transfer?.finishBody() }
    }

    func upstreamWantsBody(_ transfer: UpstreamTransfer) {
        exchange.resumeRequestBody()
    }

    // MARK: upstream → client

    func upstreamDidReceiveHead(_ transfer: UpstreamTransfer, status: Int, fields: consuming HTTPFields,
                                declared: DeclaredFraming) {
        // The client's framing must be the one the upstream's body was read with (RFC 9112
        // §6.3): Transfer-Encoding wins over Content-Length, and lengths that disagree
        // or are not plain digits are a broken upstream, never forwarded as they are.
        let refusesToken = identity != nil && route.renewal.refuses(status: status, fields: fields)
        var head = ExchangeMachine.Head(status: status, refusesToken: refusesToken, framingValid: declared.isValid)
        if identity != nil, !refusesToken, route.renewal.judgesBody(of: status) {
            head.judgedByBody = route.renewal
            head.declaredLength = declared.contentLength
        }
        switch machine.upstreamHead(head, fields: fields) {
        case .ignore, .inspectBody:
            return
        case .relay(let renewedForNextRequest):
            // Only a head whose framing is valid is relayed (`framingValid`).
            relayHead(status: status, fields: consume fields, declared: declared, renewedForNextRequest: renewedForNextRequest)
        case .renewAndReplay:
            return renewAndReplay(after: transfer)
        case .rejectToken:
            return rejectToken(transfer)
        case .refillJar:
            return refillJar(after: transfer)
        case .handOff:
            return handOff(after: transfer)
        case .failUpstream:
            cancel(transfer)
            conclude(.upstreamFailed(UpstreamError(.other, detail: "the response's Content-Length is invalid or conflicting"),
                                     headSent: false, upstreamTime: transfer.upstreamTime))
        }
    }

    /// Sends the client the upstream's head, made fit for it. `renewedForNextRequest`: the
    /// token was refused but this request cannot be sent again; it is renewed for the
    /// next one, and the client told so. `declared`: what `fields` say of the framing, valid.
    func relayHead(status: Int, fields: consuming HTTPFields, declared: DeclaredFraming, renewedForNextRequest: Bool) {
        precondition(declared.isValid, "a head with invalid framing relayed")
        if renewedForNextRequest {
            renewForNextRequest()
            fields.append(name: "Latchkey-Token-Renewed", value: "true")
        }
        if case .transferEncoded = declared { fields.removeAll(named: .contentLength) }
        fields.removeHopByHop()
        if route.keepsCookies, fields.contains(.setCookie) {
            // curl's cookie engine has taken them into the jar; the client needs none.
            fields.removeAll(named: .setCookie)
            identity?.cookiesChanged()
        }
        rewriter.rewrite(&fields)
        if route.handoff != nil, HandoffMarks.presentsGuard(exchange.head.fields) {
            fields.append(name: .setCookie, value: HandoffMarks.clearingGuard(route: route, secure: rewriter.clientUsesTLS))
        }
        if let via = route.via {
            let hop = "1.1 \(via)"
            if let existing = fields[.via] { fields.set(name: .via, value: existing + ", " + hop) } else { fields.append(name: .via, value: hop) }
        }
        exchange.sendHead(status: status, fields: consume fields, declared: declared)
    }

    func upstreamDidReceiveBody(_ transfer: UpstreamTransfer, _ bytes: UnsafeRawBufferPointer) -> Bool {
        switch machine.responseBody(bytes) {
        case .forward: return exchange.sendBody(bytes)
        // A held body is bounded: the upstream may go on until it is judged or released.
        case .hold, .drop: return true
        case .release(let held): return relay(held, renewedForNextRequest: false)
        }
    }

    func responseDrained() {
        transfer?.resumeReceiving()
    }

    func upstreamDidFinish(_ transfer: UpstreamTransfer, error: UpstreamError?) {
        ended(transfer)
        let action = machine.upstreamFinished(failed: error != nil)
        switch action {
        case .ignore:
            return
        case .renewAndReplay:
            return renewAndReplay(after: transfer)
        case .rejectToken:
            return rejectToken(transfer)
        case .relayHeld(let held, let renewedForNextRequest):
            relay(held, renewedForNextRequest: renewedForNextRequest)
        case .finish, .answerFailure, .cutResponse:
            break
        }
        if let error {
            conclude(.upstreamFailed(error, headSent: action == .cutResponse, upstreamTime: transfer.upstreamTime))
        } else {
            conclude(.relayed(upstreamTime: transfer.upstreamTime))
        }
    }

    func exchangeAborted(_ reason: ExchangeEnd) {
        let bodyRejected = if case .requestRejected = reason { true } else { false }
        switch machine.clientGone(bodyRejected: bodyRejected) {
        case .ignore:
            return
        case .toHandoff:
            handoff?.exchangeAborted(reason)
        case .cancel(let record):
            let transfer = self.transfer
            transfer.map(cancel)
            if record { conclude(.clientGone(upstreamTime: transfer?.upstreamTime)) }
        }
    }

    /// Stops a transfer whose response will not be relayed; nothing is reported after.
    func cancel(_ transfer: UpstreamTransfer) {
        transfer.cancel()
        if transfer === self.transfer { ended(transfer) }
    }

    /// The running transfer finished or was cancelled: it is let go, and the connections it
    /// went on are counted, once.
    private func ended(_ transfer: UpstreamTransfer) {
        self.transfer = nil
        metrics.upstreamConnections(transfer.connectionUse)
    }

    /// Answers the client from the proxy itself (no upstream response was relayed); the
    /// error code is the exchange's outcome in the log.
    func answer(_ document: ErrorDocument, extraFields: HTTPFields = HTTPFields()) {
        conclude(.refused(document, extraFields: extraFields, outcome: document.error))
    }

    func conclude(_ ending: ExchangeEnding) {
        handler.conclude(exchange, ending, route: route, in: context)
    }

    /// The identity's jar on a route with `jar: proxy`.
    var cookieJar: CookieJar? { route.keepsCookies ? identity?.cookieJar : nil }
}

extension ExchangeMachine.Plan {
    /// The plan of a request on `route` injecting `identity`. `handoffCallable`: the
    /// configuration can call handoff endpoints.
    init(route: Route, identity: Identity?, head: borrowing RequestHead, handoffCallable: Bool) {
        let handoff = route.handoff != nil && handoffCallable
        // Sent again after a token renewal, or after a handoff has filled the proxy's jar.
        let replayable = identity?.renewable == true || (route.keepsCookies && route.handoff != nil)
        let declaredLength: UInt64? = if case .length(let length) = head.framing { length } else { nil }
        self.init(
            injectsIdentity: identity != nil, renewable: identity?.renewable == true,
            refillsJarOn401: handoff && route.keepsCookies,
            handsOffOn401: handoff && !route.keepsCookies && BrowserNavigation.isNavigation(head),
            replayLimit: replayable ? route.renewal.replayLimit : nil,
            declaredLength: declaredLength)
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
