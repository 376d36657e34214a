import LatchkeyHTTP
import LatchkeyLoop

/// One client connection on one loop: reads and decodes requests, hands each to the
/// proxy as a `ServerExchange`, frames and writes the response, and enforces the
/// timeouts. Requests on a connection are answered strictly in order: the next pipelined
/// request is decoded only after the previous response has been finished.
final class ServerConnection: IOHandler, DeferredWork {
    let socket: Socket
    let peer: SocketAddress?
    let listener: ListenerInfo
    /// The server owns its connections and closes them all before it goes away.
    unowned(unsafe) let server: HTTPServer
    var registration: IORegistration?
    var interest: IOEvents = []

    var input: InputBuffer
    var decoder: RequestDecoder
    var output: [UInt8] = []
    var outputOffset = 0

    var exchange: ServerExchange?
    var handler: ExchangeHandler?
    var requestPhase = RequestPhase.awaitingHead
    var bodyPaused = false
    var continuePending = false
    var framing = ResponseFraming.notStarted
    var keepAlive = true
    var overHighWater = false
    var closeAfterFlush = false
    var flushScheduled = false
    var processScheduled = false
    var closed = false
    var lingering = false

    lazy var timer = LoopTimer { [unowned self] in self.timerFired() }
    var timerMode = TimerMode.none
    /// When the first byte of the current request head arrived (slow-loris defence: the
    /// head timeout is not extended by trickling bytes).
    var headStartedAt: LoopInstant?

    enum RequestPhase {
        case awaitingHead
        case body
        case complete
    }

    enum ResponseFraming {
        case notStarted
        case bodiless
        case length(remaining: UInt64)
        case chunked
        case closeDelimited
    }

    enum TimerMode: Equatable {
        case none
        case idle
        case head
        case waitingOnClient
    }

    init(socket: Socket, peer: SocketAddress?, listener: ListenerInfo, server: HTTPServer) {
        self.socket = socket
        self.peer = peer
        self.listener = listener
        self.server = server
        input = InputBuffer(pool: server.inputBuffers)
        decoder = RequestDecoder(limits: server.settings.http)
    }

    var isIdle: Bool { exchange == nil && input.isEmpty && pendingOutput == 0 }

    var pendingOutput: Int { output.count - outputOffset }

    var loop: EventLoop { server.loop }

    func start() throws(SystemError) {
        interest = .readable
        registration = try loop.register(fd: socket.fd, events: interest, handler: self)
        updateTimer()
    }

    // MARK: IO events

    func handleIO(_ events: IOEvents) {
        if lingering { return discardUntilClosed() }
        if events.contains(.writable) { flush() }
        // epoll reports a reset or hang-up even without read interest (a full buffer): we
        // would not read it, and level-triggered epoll would report it on every turn.
        if !closed, !interest.contains(.readable), !events.isDisjoint(with: [.hangup, .error]) {
            return close()
        }
        if !closed, !events.isDisjoint(with: [.readable, .hangup, .error]) { readInput() }
        if !closed { updateInterest() }
    }

    func readInput() {
        while !closed {
            if input.isFull {
                // A head larger than the buffer may grow it up to the header limit; the
                // decoder rejects anything beyond. Otherwise a full buffer is backpressure.
                guard requestPhase == .awaitingHead, exchange == nil,
                      input.grow(upTo: decoder.limits.maxHeaderBytes + 4096) else { break }
            }
            let space = input.writableSpace()
            let count: Int?
            do {
                count = try socket.read(into: space)
            } catch {
                close()
                return
            }
            guard let count else { break }
            if count == 0 {
                close()
                return
            }
            if headStartedAt == nil, exchange == nil { headStartedAt = loop.now }
            input.didWrite(count)
            if count < space.count { break }
        }
        processInput()
        if exchange == nil { input.releaseIfEmpty() }
    }

    /// Decodes what is buffered as far as the current request allows.
    func processInput() {
        while !closed {
            switch requestPhase {
            case .awaitingHead:
                guard exchange == nil, !input.isEmpty else { return updateTimer() }
                let step = decoder.decode(input.readable)
                input.consume(step.consumed)
                switch step.event {
                case .head(let head):
                    startExchange(head)
                case .error(let error):
                    return reject(ErrorDocument(error))
                case .needMore, .body, .end:
                    return updateTimer()
                }
            case .body:
                guard !bodyPaused else { return updateTimer() }
                let step = decoder.decode(input.readable)
                switch step.event {
                case .body(let range):
                    deliverBody(UnsafeRawBufferPointer(rebasing: input.readable[range]))
                    input.consume(step.consumed)
                case .end:
                    input.consume(step.consumed)
                    requestPhase = .complete
                    handler?.requestBodyEnded()
                case .needMore:
                    input.consume(step.consumed)
                    return updateTimer()
                case .error(let error):
                    input.consume(step.consumed)
                    return failRequestBody(ErrorDocument(error))
                case .head:
                    return
                }
            case .complete:
                return updateTimer()
            }
        }
    }

    func startExchange(_ head: RequestHead) {
        headStartedAt = nil
        let exchange = ServerExchange(head: head, listener: listener, peer: peer, receivedAt: loop.now, connection: self)
        self.exchange = exchange
        requestPhase = .body
        framing = .notStarted
        keepAlive = head.keepAlive && !server.isShuttingDown
        let hasBody = head.framing != .none
        continuePending = head.expectsContinue && hasBody && head.version == .http1_1
        bodyPaused = continuePending

        if let limit = server.settings.maxRequestBodyBytes, case .length(let length) = head.framing, length > limit {
            return reject(ErrorDocument(status: 413, error: "payload_too_large", message: "request body is larger than the \(limit)-byte limit"), exchange: exchange)
        }
        if !hasBody {
            // Take the decoder past this request's (empty) end now, so that an answer given
            // inside `handle` finds the request complete and keeps the connection.
            _ = decoder.decode(UnsafeRawBufferPointer(start: nil, count: 0))
            requestPhase = .complete
        }
        let handler = server.handler.handle(exchange)
        // The handler may already have answered (a 404, a refusal) inside `handle`.
        guard !exchange.finished else { return }
        self.handler = handler
        if !hasBody { handler.requestBodyEnded() }
    }

    func deliverBody(_ bytes: UnsafeRawBufferPointer) {
        guard let exchange else { return }
        exchange.requestBodyBytes += UInt64(bytes.count)
        if let limit = server.settings.maxRequestBodyBytes, exchange.requestBodyBytes > limit {
            return failRequestBody(ErrorDocument(status: 413, error: "payload_too_large", message: "request body is larger than the \(limit)-byte limit"))
        }
        handler?.requestBody(bytes)
    }

    /// The request body turned out malformed or too large after the exchange started.
    func failRequestBody(_ document: ErrorDocument) {
        let handler = self.handler
        self.handler = nil
        handler?.exchangeAborted(.requestRejected)
        guard let exchange else { return }
        if case .notStarted = framing {
            reject(document, exchange: exchange)
        } else {
            abort(exchange)
        }
    }

    /// Answers a request the server refuses on its own and closes the connection after it:
    /// the rest of the byte stream cannot be trusted to frame another request.
    func reject(_ document: ErrorDocument, exchange: ServerExchange? = nil) {
        keepAlive = false
        continuePending = false
        let exchange = exchange ?? ServerExchange(
            head: RequestHead(method: "", target: "", version: .http1_1, fields: [], framing: .none, keepAlive: false, expectsContinue: false),
            listener: listener, peer: peer, receivedAt: loop.now, connection: self)
        self.exchange = exchange
        requestPhase = .complete
        exchange.respond(document)
        server.handler.serverAnswered(exchange)
    }
}
