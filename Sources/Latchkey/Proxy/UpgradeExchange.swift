import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyServer
import LatchkeyUpstream

/// A request that switches protocols (a WebSocket's opening handshake), on one loop. libcurl
/// opens the connection to the route's upstream (its TLS settings, client certificate and
/// proxy; HTTP/1.1) and hands it over; Latchkey writes the handshake with the route's
/// credentials (`RequestHeadEncoder`) and reads the answer (`ResponseDecoder`). A `101`
/// hands the connection to the client's, which relays the bytes both ways; any other
/// answer is relayed as a response. Glue around `UpgradeMachine`, which decides, a refused
/// token's renewal included.
///
/// It is its own timer (`LoopTimer`): the first-byte timeout while the answer's head is
/// awaited, the idle timeout while its body comes. An upgraded connection then holds no timer
/// object and no closure context beside it.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
final class UpgradeExchange: LoopTimer, ExchangeHandler, UpstreamConnectionDelegate, IOHandler, TokenWaiter {
    private let exchange: ServerExchange
    private let forward: Admission.Forward
    private let plan: UpgradePlan
    /// The loop's handler outlives every exchange on it.
    private unowned(unsafe) let handler: ProxyHandler
    private let context: ProxyContext
    @exclusivity(unchecked) private var machine: UpgradeMachine
    @exclusivity(unchecked) private var token: IssuedToken?
    /// Until the switch, or the end of the relayed answer.
    @exclusivity(unchecked) private var connection: UpstreamConnection?
    /// The handshake's bytes not yet taken by the upstream.
    @exclusivity(unchecked) private var outgoing: [UInt8] = []
    /// The upstream's bytes not yet decoded.
    @exclusivity(unchecked) private var incoming: [UInt8] = []
    @exclusivity(unchecked) private var decoder = ResponseDecoder(requestMethod: "GET")
    @exclusivity(unchecked) private var interest: IOEvents = []
    /// The client's output is over its high-water mark: the upstream is not read.
    @exclusivity(unchecked) private var throttled = false
    @exclusivity(unchecked) private var startedAt: LoopInstant?

    private var route: Route { forward.route }
    private var identity: Identity? { forward.identity }

    init(exchange: ServerExchange, forward: Admission.Forward, plan: UpgradePlan, handler: ProxyHandler, context: ProxyContext) {
        self.exchange = exchange
        self.forward = forward
        self.plan = plan
        self.handler = handler
        self.context = context
        machine = UpgradeMachine(injectsIdentity: forward.identity != nil, renewable: forward.identity?.renewable == true)
    }

    func start() {
        let current = identity?.current()
        switch machine.start(tokenAtHand: route.canInject(current)) {
        case .handshake: handshake(token: current)
        case .waitForToken: waitForToken(on: handler.loop.handle) { self.identity?.demand($0) }
        }
    }

    // MARK: the handshake

    private func handshake(token: IssuedToken?) {
        self.token = token
        let request = forward.blueprint.request(for: route, head: exchange.head, token: token, jar: nil)
        var fields = request.fields
        fields.append(name: .connection, value: "Upgrade")
        fields.append(name: .upgrade, value: plan.offer)
        outgoing = []
        guard RequestHeadEncoder.encode(method: request.method, target: request.target, fields: fields, into: &outgoing) else {
            return fail(UpstreamError(.other, detail: "the handshake's request line cannot be written"))
        }
        incoming = []
        decoder = ResponseDecoder(requestMethod: request.method)
        var options = request.options
        // The handshake is HTTP/1.1 (RFC 6455 §4.1); ALPN must not agree on h2.
        options.http2 = false
        startedAt = handler.loop.now
        connection = handler.upstream.connect(to: route.upstream.origin + "/", options: options, delegate: self)
        if connection == nil { fail(UpstreamError(.other, detail: "curl_easy_init failed")) }
    }

    func upstreamConnected(_ connection: UpstreamConnection) {
        guard connection === self.connection else { return connection.close() }
        writeHandshake()
    }

    func upstreamConnectFailed(_ connection: UpstreamConnection, error: UpstreamError) {
        guard connection === self.connection else { return }
        self.connection = nil
        fail(error)
    }

    func handleIO(_ events: IOEvents) {
        guard connection != nil else { return }
        if events.contains(.writable) { writeHandshake() }
        if connection != nil, !events.isDisjoint(with: [.readable, .hangup, .error]) { readUpstream() }
    }

    private func writeHandshake() {
        guard let connection else { return }
        while !outgoing.isEmpty {
            let sent: Int?
            do {
                sent = try outgoing.withUnsafeBytes { bytes throws(SystemError) in try connection.send(bytes) }
            } catch {
                return fail(UpstreamError(.sendFailed, detail: "\(error)"))
            }
            guard let sent, sent > 0 else { return watch([.writable]) }
            outgoing.removeFirst(sent)
        }
        if route.options.firstByteTimeout > .zero { handler.loop.arm(self, after: route.options.firstByteTimeout) }
        watch([.readable])
    }

    // MARK: the answer

    private func readUpstream() {
        guard let connection else { return }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while self.connection != nil, !throttled {
            let count: Int?
            do {
                count = try chunk.withUnsafeMutableBytes { buffer throws(SystemError) in try connection.receive(into: buffer) }
            } catch {
                return fail(UpstreamError(.receiveFailed, detail: "\(error)"))
            }
            guard let count else { return }
            if count == 0 { return decode(ended: true) }
            incoming += chunk[0..<count]
            decode(ended: false)
        }
    }

    /// Decodes what has come; `ended`: the upstream closed the connection.
    private func decode(ended: Bool) {
        while self.connection != nil {
            let step = incoming.withUnsafeBytes { decoder.decode($0) }
            switch step.event {
            case .needMore:
                incoming.removeFirst(step.consumed)
                if ended { finishStream() }
                return
            case .head(let head):
                incoming.removeFirst(step.consumed)
                if head.status >= 200 || head.status == 101 { responseHead(head) }
            case .switched:
                return
            case .body(let range):
                let more = incoming.withUnsafeBytes { exchange.sendBody(UnsafeRawBufferPointer(rebasing: $0[range])) }
                incoming.removeFirst(step.consumed)
                if route.options.idleTimeout > .zero { handler.loop.arm(self, after: route.options.idleTimeout) }
                if !more {
                    throttled = true
                    watch([])
                    return
                }
            case .end:
                incoming.removeFirst(step.consumed)
                return answerEnded()
            case .error(let error):
                return fail(UpstreamError(.receiveFailed, detail: "the upstream's response: \(error)"))
            }
        }
    }

    private func finishStream() {
        switch decoder.finish() {
        case .end: answerEnded()
        case .error(let error): fail(UpstreamError(.receiveFailed, detail: "the upstream's response: \(error)"))
        case .needMore, .head, .body, .switched: break
        }
    }

    private func responseHead(_ head: ResponseHead) {
        handler.loop.disarm(self)
        let refuses = identity != nil && route.renewal.refuses(status: head.status, fields: head.fields)
        switch machine.responseHead(status: head.status, refusesToken: refuses) {
        case .switchProtocols:
            switchProtocols(head)
        case .renewAndRetry:
            dropConnection()
            renew()
        case .rejectToken:
            dropConnection()
            conclude(.refused(ErrorDocument(status: 401, error: "token_rejected",
                                            message: "the upstream refused the token of identity \(identity?.name ?? ""), which cannot be renewed; store a new one",
                                            route: route.name), outcome: "token_rejected"))
        case .answer:
            var fields = head.fields
            if head.framing == .chunked { fields.removeAll(named: .contentLength) }
            fields.removeHopByHop()
            forward.rewriter.rewrite(&fields)
            exchange.sendHead(status: head.status, fields: consume fields)
            if route.options.idleTimeout > .zero { handler.loop.arm(self, after: route.options.idleTimeout) }
        case .ignore:
            break
        }
    }

    /// The `101`: its fields (hop-by-hop ones but the switch's own left out, the rest as for
    /// any response) and what came behind it go to the client, with the connection.
    private func switchProtocols(_ head: ResponseHead) {
        guard let connection else { return }
        var fields = head.fields
        let switchedTo = fields.values(named: .upgrade).joined(separator: ", ")
        fields.removeHopByHop()
        forward.rewriter.rewrite(&fields)
        fields.append(name: .connection, value: "Upgrade")
        fields.append(name: .upgrade, value: switchedTo.isEmpty ? plan.offer : switchedTo)
        watch([])
        self.connection = nil
        let early = incoming
        incoming = []
        context.metrics.routes[route.index].upgradeStarted()
        exchange.openTunnel(.upgrade(connection, fields: fields, early: early, webSocket: plan.webSocket))
    }

    func tunnelEnded(_ end: TunnelEnd) {
        machine.streamEnded()
        context.metrics.routes[route.index].upgradeEnded(toUpstream: exchange.requestBodyBytes, toClient: exchange.responseBodyBytes)
        let outcome = switch end {
        case .closed: "upgrade_closed"
        case .idle: "upgrade_idle"
        case .failed: "upgrade_failed"
        case .shutdown: "upgrade_shutdown"
        }
        conclude(.tunneled(outcome: outcome))
    }

    private func answerEnded() {
        machine.answerFinished()
        dropConnection()
        conclude(.relayed(upstreamTime: startedAt.map { handler.loop.now.since($0) }))
    }

    func responseDrained() {
        guard throttled, connection != nil else { return }
        throttled = false
        watch([.readable])
        // Bytes that came before the pause, and what the upstream holds decrypted.
        decode(ended: false)
        readUpstream()
    }

    // MARK: renewal

    private func renew() {
        guard let identity, let token else { return }
        route.metrics(in: context).tokenRenewed()
        route.metrics(in: context).tokenReplayed()
        handler.logger.info("upstream refused the token on an upgrade; renewing and sending the handshake again", metadata: [
            "route": .string(route.name), "identity": .string(identity.name),
        ])
        waitForToken(on: handler.loop.handle) { identity.rejected(generation: token.generation, $0) }
    }

    func tokenArrived(_ result: Result<IssuedToken, IdentityUnavailable>) {
        let token = try? result.get()
        switch machine.tokenArrived(usable: route.canInject(token)) {
        case .handshake:
            handshake(token: token)
        case .refuse:
            guard let identity, let refusal = route.refusal(for: result, identity: identity.name) else { return }
            conclude(.refused(refusal.document, extraFields: refusal.fields, outcome: refusal.document.error))
        case .ignore:
            break
        }
    }

    // MARK: ends

    /// The first-byte or the idle timeout passed.
    override func timerFired() {
        let code: UpstreamError.Code = machine.state == .answering ? .idleTimeout : .firstByteTimeout
        fail(UpstreamError(code, detail: code == .idleTimeout ? "the upstream stopped sending" : "the upstream did not answer the handshake in time"))
    }

    private func fail(_ error: UpstreamError) {
        dropConnection()
        let upstreamTime = startedAt.map { handler.loop.now.since($0) }
        switch machine.failed() {
        case .answer: conclude(.upstreamFailed(error, headSent: false, upstreamTime: upstreamTime))
        case .cut: conclude(.upstreamFailed(error, headSent: true, upstreamTime: upstreamTime))
        case .ignore: break
        }
    }

    func exchangeAborted(_ reason: ExchangeEnd) {
        guard machine.clientGone() else { return }
        dropConnection()
        conclude(.clientGone(upstreamTime: startedAt.map { handler.loop.now.since($0) }))
    }

    private func dropConnection() {
        handler.loop.disarm(self)
        connection?.close()
        connection = nil
        interest = []
    }

    private func watch(_ events: IOEvents) {
        guard let connection, events != interest else { return }
        do {
            try connection.watch(events, handler: self)
            interest = events
        } catch {
            fail(UpstreamError(.other, detail: "watching the upstream: \(error)"))
        }
    }

    private func conclude(_ ending: ExchangeEnding) {
        handler.conclude(exchange, ending, route: route, in: context)
    }

    // A handshake carries no body (UpgradePlan refuses one).
    func requestBody(_ bytes: UnsafeRawBufferPointer) {}
    func requestBodyEnded() {}
}

extension Route {
    /// This route's series in `context`'s metrics.
    func metrics(in context: ProxyContext) -> RouteMetrics { context.metrics.routes[index] }
}
