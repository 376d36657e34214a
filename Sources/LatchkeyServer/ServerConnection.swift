import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyTLS

/// One client connection on one loop, the I/O glue around its `ConnectionMachine`: reads
/// and decodes requests, hands each to the proxy as a `ServerExchange`, writes the
/// response, and arms the timer, each as the machine decides. Requests on a connection are
/// answered strictly in order: the next pipelined request is decoded only after the
/// previous response has been finished. On a TLS listener the bytes go through a
/// `TLSSession`, after a handshake (`ServerConnection+TLS.swift`).
///
/// The connection is its own timer (`LoopTimer`): an idle connection holds no timer object
/// and no closure context besides.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
final class ServerConnection: LoopTimer, IOHandler, DeferredWork {
    // In this order the fields pack with no more than a few bytes of padding: the object
    // is 203 bytes, 224 with malloc's rounding (216 at most for that). The socket's 4
    // bytes fill `LoopTimer`'s last 4, the narrow ones follow `peer`'s 25.
    @exclusivity(unchecked) var socket: Socket
    let peer: SocketAddress?
    /// Work asked for in this loop turn, run once after the events (`runDeferredWork`).
    @exclusivity(unchecked) var scheduled: ScheduledWork = []
    /// A TLS read or write waiting for the other direction's readiness; always empty on
    /// a plain listener.
    @exclusivity(unchecked) var crossedTLSWait: CrossedTLSWait = []
    @exclusivity(unchecked) var registration: IORegistration?
    @exclusivity(unchecked) var interest: IOEvents = []
    /// Where the server keeps the connection in its list, or -1 when it is not in it.
    @exclusivity(unchecked) var serverIndex: Int32 = -1
    let listener: ListenerInfo
    /// The server owns its connections and closes them all before it goes away.
    unowned(unsafe) let server: HTTPServer
    /// The transport: nil reads and writes the socket itself; a session decrypts and
    /// encrypts (`ServerConnection+Transport.swift`).
    @exclusivity(unchecked) var tls: TLSSession?
    /// The handshake's outcome and the tunnel, the relay's upstream among them, out of
    /// line (`ServerConnection+TLSAndTunnelState.swift`).
    @exclusivity(unchecked) var tlsAndTunnel: TLSAndTunnelState?

    /// The bytes read and the request decoder, while the connection reads a request or
    /// relays (`ServerConnection+Reader.swift`); nil while idle.
    @exclusivity(unchecked) var reader: RequestReader?
    @exclusivity(unchecked) var output: [UInt8] = []
    @exclusivity(unchecked) var outputOffset = 0
    /// When the connection last read, wrote or changed state: its timeouts count from here
    /// (`updateTimer`).
    @exclusivity(unchecked) var lastActivity = LoopInstant(nanoseconds: 0)

    @exclusivity(unchecked) var exchange: ServerExchange?
    @exclusivity(unchecked) var handler: ExchangeHandler?
    /// The protocol state; this class only performs what it decides.
    @exclusivity(unchecked) var machine: ConnectionMachine

    struct ScheduledWork: OptionSet {
        let rawValue: UInt8
        static let process = ScheduledWork(rawValue: 1 << 0)
        static let flush = ScheduledWork(rawValue: 1 << 1)
    }

    /// `tls`: the session of a TLS listener's connection, which handshakes first.
    init(socket: consuming Socket, peer: SocketAddress?, listener: ListenerInfo, tls: TLSSession?, server: HTTPServer) {
        self.socket = socket
        self.peer = peer
        self.listener = listener
        self.server = server
        self.tls = tls
        if let handshakeTimeout = listener.tls?.handshakeTimeout, tls != nil {
            machine = ConnectionMachine(handshakingSince: server.loop.now, timeout: handshakeTimeout)
        } else {
            machine = ConnectionMachine(openedAt: server.loop.now)
        }
    }

    /// The timeout the machine armed has passed (`ServerConnection+Lifecycle.swift`).
    override func timerFired() {
        deadlinePassed()
    }

    var pendingOutput: Int { output.count - outputOffset }

    var loop: EventLoop { server.loop }

    func start() throws(SystemError) {
        interest = edgeTriggered(.readable)
        registration = try loop.register(fd: socket.fd, events: interest, handler: self)
        updateTimer()
    }

    // MARK: IO events

    func handleIO(_ events: IOEvents) {
        if machine.isLingering { return discardUntilClosed() }
        if machine.isRelaying { return relayClientReady(events) }
        if tls != nil {
            if machine.isHandshaking { return continueHandshake() }
            if !crossedTLSWait.isEmpty { retryCrossedTLSWaits(events) }
        }
        if !machine.isClosed, events.contains(.writable) { flush() }
        // epoll reports a reset or hang-up even without read interest (a full buffer): we
        // would not read it, and level-triggered epoll would report it on every turn.
        if !machine.isClosed, !interest.contains(.readable), !events.isDisjoint(with: [.hangup, .error]) {
            return close()
        }
        if !machine.isClosed, !events.isDisjoint(with: [.readable, .hangup, .error]) {
            readInput(peerFinished: events.contains(.hangup))
        }
        if !machine.isClosed { updateInterest() }
    }

    /// Reads what the transport has and decodes it; again while a TLS session holds
    /// decrypted bytes that epoll cannot report, or while a body or a head larger than the
    /// buffer goes on arriving, up to the settings' budget for one turn.
    ///
    /// Reading stops with bytes perhaps left in the socket when a read filled the buffer
    /// (the handler paused the body, the budget ran out), and `peerFinished` (epoll
    /// reported the client's end of sending, EPOLLRDHUP) says the end is still to be read
    /// behind the last bytes. Either way, while the connection still wants input, the
    /// socket is looked at again at the next turn, as a level-triggered watch would report
    /// it: the end then, after what this turn's requests wrote. When it wants none (a full
    /// buffer), read interest goes, and asking for it again later makes epoll look.
    func readInput(peerFinished: Bool = false) {
        var budget = server.settings.readBudgetPerTurn
        while true {
            let read = readAvailable()
            if machine.isClosed { return }
            processInput()
            guard read.count > 0 else { break }
            if hasUnreadTLSInput { continue }
            budget -= read.count
            if read.filledBuffer, readsOnAfterFullBuffer, budget > 0 { continue }
            if read.filledBuffer || peerFinished, machine.wantsInput(bufferFull: inputIsFull) { readAgainNextTurn() }
            break
        }
        if exchange == nil { releaseReaderIfIdle() }
    }

    /// After a read that filled the buffer and its decoding: whether to read again now.
    private var readsOnAfterFullBuffer: Bool {
        switch machine.decodeStep {
        // A head still incomplete in a full buffer: the next read grows the buffer.
        case .head: true
        // A body, while the handler takes it.
        case .body: !inputIsFull
        case .none: false
        }
    }

    /// Reads until the transport has nothing more or the buffer is full (backpressure);
    /// closes at the end of the stream. Returns how much was read, and whether it stopped
    /// at a full buffer, with more possibly waiting in the socket.
    private func readAvailable() -> (count: Int, filledBuffer: Bool) {
        var total = 0
        let reader = heldReader
        while !machine.isClosed {
            if reader.input.isFull {
                // A full buffer is decoded before it grows: most heads end early in it, with
                // body bytes behind. A buffer that was full when this read began holds a
                // head larger than it, which may grow it up to the header limit (the
                // decoder rejects anything beyond). Otherwise a full buffer is backpressure.
                guard total == 0, machine.isAwaitingHead, reader.input.grow(upTo: reader.decoder.limits.maxHeaderBytes + 4096) else {
                    return (total, true)
                }
            }
            let space = reader.input.writableSpace()
            let count: Int?
            do {
                count = try receive(into: space)
            } catch {
                close()
                return (0, false)
            }
            guard let count else { break }
            if count == 0 {
                close()
                return (0, false)
            }
            total += count
            machine.bytesArrived(at: loop.now)
            reader.input.didWrite(count)
            if count < space.count { break }
        }
        return (total, false)
    }

    /// Decodes what is buffered as far as the current request allows. The reader is read
    /// again on every turn: the calls out (the handler's) may give it back.
    func processInput() {
        while true {
            switch machine.decodeStep {
            case .head:
                guard let reader, !reader.input.isEmpty else { return updateTimer() }
                let step = reader.decoder.decode(reader.input.readable)
                reader.input.consume(step.consumed)
                switch step.event {
                case .head(let head):
                    startExchange(head)
                case .error(let error):
                    return reject(ErrorDocument(error))
                case .needMore, .body, .end:
                    machine.headIncomplete(bufferEmpty: reader.input.isEmpty)
                    return updateTimer()
                }
            case .body:
                // A request body under way: its decoder state keeps the reader.
                let reader = heldReader
                let step = reader.decoder.decode(reader.input.readable)
                switch step.event {
                case .body(let range):
                    deliverBody(UnsafeRawBufferPointer(rebasing: reader.input.readable[range]))
                    reader.input.consume(step.consumed)
                case .end:
                    reader.input.consume(step.consumed)
                    machine.bodyEnded()
                    handler?.requestBodyEnded()
                case .needMore:
                    reader.input.consume(step.consumed)
                    return updateTimer()
                case .error(let error):
                    reader.input.consume(step.consumed)
                    return failRequestBody(ErrorDocument(error))
                case .head:
                    return
                }
            case .none:
                return updateTimer()
            }
        }
    }

    /// `head` is consumed: the exchange keeps it without a copy of its strings and arrays.
    func startExchange(_ head: consuming RequestHead) {
        let keepAlive = head.keepAlive && server.settings.keepAlive && !server.isShuttingDown
        let action = machine.headDecoded(head, at: loop.now, keepAlive: keepAlive, settings: server.settings)
        let exchange = makeExchange(head)
        if case .reject(let document) = action { return answerItself(document, exchange: exchange) }
        if action == .deliverWithoutBody {
            // Take the decoder past this request's (empty) end now, so that an answer given
            // inside `handle` finds the request complete and keeps the connection.
            _ = reader?.decoder.decode(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        let handler = server.handler.handle(exchange)
        // The handler may already have answered (a 404, a refusal) inside `handle`.
        guard !exchange.finished else { return }
        self.handler = handler
        if action == .deliverWithoutBody { handler.requestBodyEnded() }
    }

    func deliverBody(_ bytes: UnsafeRawBufferPointer) {
        guard let exchange else { return }
        exchange.record.requestBodyBytes += UInt64(bytes.count)
        if let document = machine.bodyOverLimit(total: exchange.requestBodyBytes, settings: server.settings) {
            return failRequestBody(document)
        }
        handler?.requestBody(bytes)
    }

    /// The request body turned out malformed, too large or too slow after the exchange
    /// started.
    func failRequestBody(_ document: ErrorDocument) {
        let handler = self.handler
        self.handler = nil
        handler?.exchangeAborted(.requestRejected)
        guard let exchange else { return }
        if machine.bodyFailureIsAnswerable {
            machine.serverAnswers()
            answerItself(document, exchange: exchange)
        } else {
            abort(exchange)
        }
    }

    /// Answers a request the server refuses on its own before it became an exchange (a
    /// malformed head, a head too slow), and closes the connection after it.
    func reject(_ document: ErrorDocument) {
        machine.serverAnswers()
        answerUnparsed(document)
    }

    /// Answers with no request head decoded, as the machine decided.
    func answerUnparsed(_ document: ErrorDocument) {
        let exchange = makeExchange(
            RequestHead(method: "", target: "", version: .http1_1, fields: [], framing: .none, keepAlive: false, expectsContinue: false))
        answerItself(document, exchange: exchange)
    }

    /// The connection's current exchange, from now on.
    private func makeExchange(_ head: consuming RequestHead) -> ServerExchange {
        let exchange = ServerExchange(head: head, listener: listener, peer: peer, receivedAt: loop.now, connection: self)
        if let tlsInfo { exchange.record.tls = tlsInfo }
        if let tunnelAuthority { exchange.record.tunnelAuthority = tunnelAuthority }
        self.exchange = exchange
        return exchange
    }

    private func answerItself(_ document: ErrorDocument, exchange: ServerExchange) {
        exchange.respond(document)
        server.handler.serverAnswered(exchange)
    }
}
