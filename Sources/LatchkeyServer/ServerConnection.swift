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
    private unowned(unsafe) let server: HTTPServer
    private var registration: IORegistration?
    private var interest: IOEvents = []

    private var input: InputBuffer
    private var decoder: RequestDecoder
    private var output: [UInt8] = []
    private var outputOffset = 0

    private var exchange: ServerExchange?
    private var handler: ExchangeHandler?
    private var requestPhase = RequestPhase.awaitingHead
    private var bodyPaused = false
    private var continuePending = false
    private var framing = ResponseFraming.notStarted
    private var keepAlive = true
    private var overHighWater = false
    private var closeAfterFlush = false
    private var flushScheduled = false
    private var processScheduled = false
    private(set) var closed = false
    private var lingering = false

    private lazy var timer = LoopTimer { [unowned self] in self.timerFired() }
    private var timerMode = TimerMode.none
    /// When the first byte of the current request head arrived (slow-loris defence: the
    /// head timeout is not extended by trickling bytes).
    private var headStartedAt: LoopInstant?

    private enum RequestPhase {
        case awaitingHead
        case body
        case complete
    }

    private enum ResponseFraming {
        case notStarted
        case bodiless
        case length(remaining: UInt64)
        case chunked
        case closeDelimited
    }

    private enum TimerMode: Equatable {
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

    private var pendingOutput: Int { output.count - outputOffset }

    private var loop: EventLoop { server.loop }

    func start() throws(SystemError) {
        interest = .readable
        registration = try loop.register(fd: socket.fd, events: interest, handler: self)
        updateTimer()
    }

    // MARK: IO events

    func handleIO(_ events: IOEvents) {
        if lingering { return discardUntilClosed() }
        if events.contains(.writable) { flush() }
        if !closed, !events.isDisjoint(with: [.readable, .hangup, .error]) { readInput() }
        if !closed { updateInterest() }
    }

    private func readInput() {
        while !closed {
            if input.isFull {
                // A head larger than the buffer may grow it up to the header limit; the
                // decoder rejects anything beyond. Otherwise a full buffer is backpressure.
                guard requestPhase == .awaitingHead, exchange == nil,
                      input.grow(upTo: server.settings.http.maxHeaderBytes + 4096) else { break }
            }
            let space = input.writableSpace()
            let count: Int?
            do {
                count = try socket.read(into: space)
            } catch {
                peerVanished()
                return
            }
            guard let count else { break }
            if count == 0 {
                peerVanished()
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
    private func processInput() {
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

    private func startExchange(_ head: RequestHead) {
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

    private func deliverBody(_ bytes: UnsafeRawBufferPointer) {
        guard let exchange else { return }
        exchange.requestBodyBytes += UInt64(bytes.count)
        if let limit = server.settings.maxRequestBodyBytes, exchange.requestBodyBytes > limit {
            return failRequestBody(ErrorDocument(status: 413, error: "payload_too_large", message: "request body is larger than the \(limit)-byte limit"))
        }
        handler?.requestBody(bytes)
    }

    /// The request body turned out malformed or too large after the exchange started.
    private func failRequestBody(_ document: ErrorDocument) {
        let handler = self.handler
        self.handler = nil
        handler?.exchangeAborted()
        guard let exchange else { return }
        if case .notStarted = framing {
            reject(document, exchange: exchange)
        } else {
            abort(exchange)
        }
    }

    /// Answers a request the server refuses on its own and closes the connection after it:
    /// the rest of the byte stream cannot be trusted to frame another request.
    private func reject(_ document: ErrorDocument, exchange: ServerExchange? = nil) {
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

    // MARK: the response

    func sendHead(_ exchange: ServerExchange, status: Int, fields: HTTPFields) {
        guard exchange === self.exchange, case .notStarted = framing else { return }
        var fields = fields
        let head = exchange.head
        if continuePending {
            // The client is waiting to be told to send its body and never was: it cannot
            // reuse this connection.
            continuePending = false
            keepAlive = false
        }
        if !responseCarriesBody(requestMethod: head.method, status: status) {
            framing = .bodiless
        } else if let length = fields["Content-Length"].flatMap(UInt64.init) {
            framing = .length(remaining: length)
        } else if head.version == .http1_1 {
            fields.removeAll(named: "Content-Length")
            fields.append(name: "Transfer-Encoding", value: "chunked")
            framing = .chunked
        } else {
            framing = .closeDelimited
            keepAlive = false
        }
        if requestPhase != .complete {
            // Answered while the request body is still arriving (an early error, an
            // upstream that does not wait): closing is the only safe way to resynchronise.
            keepAlive = false
        }
        if !keepAlive {
            fields.set(name: "Connection", value: "close")
        } else if head.version == .http1_0 {
            fields.set(name: "Connection", value: "keep-alive")
        }
        exchange.status = status
        ResponseHeadEncoder.encode(status: status, fields: fields, into: &output)
        scheduleFlush()
    }

    func sendBody(_ exchange: ServerExchange, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard exchange === self.exchange, !bytes.isEmpty else { return !overHighWater }
        switch framing {
        case .notStarted, .bodiless:
            return true
        case .length(let remaining):
            let count = Int(min(UInt64(bytes.count), remaining))
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
            framing = .length(remaining: remaining - UInt64(count))
            exchange.responseBodyBytes += UInt64(count)
        case .chunked:
            ChunkedEncoder.appendChunkHeader(size: bytes.count, into: &output)
            output.append(contentsOf: bytes)
            output.append(contentsOf: ChunkedEncoder.chunkTerminator)
            exchange.responseBodyBytes += UInt64(bytes.count)
        case .closeDelimited:
            output.append(contentsOf: bytes)
            exchange.responseBodyBytes += UInt64(bytes.count)
        }
        scheduleFlush()
        if pendingOutput >= server.settings.outboundHighWater { overHighWater = true }
        return !overHighWater
    }

    func finish(_ exchange: ServerExchange) {
        guard exchange === self.exchange, !exchange.finished else { return }
        switch framing {
        case .length(let remaining) where remaining > 0:
            // Fewer bytes than promised: the client must see a cut, not a short success.
            return abort(exchange)
        case .chunked:
            output.append(contentsOf: ChunkedEncoder.lastChunk)
        case .notStarted, .bodiless, .length, .closeDelimited:
            break
        }
        exchange.finished = true
        if case .closeDelimited = framing { keepAlive = false }
        if requestPhase != .complete { keepAlive = false }
        endExchange()
        scheduleFlush()
    }

    func abort(_ exchange: ServerExchange) {
        guard exchange === self.exchange, !exchange.finished else { return }
        exchange.aborted = true
        exchange.finished = true
        keepAlive = false
        endExchange()
        scheduleFlush()
    }

    private func endExchange() {
        handler = nil
        exchange?.connection = nil
        exchange = nil
        framing = .notStarted
        bodyPaused = false
        continuePending = false
        overHighWater = false
        input.releaseIfEmpty()
        if keepAlive && !server.isShuttingDown {
            requestPhase = .awaitingHead
            scheduleProcessing()
        } else {
            closeAfterFlush = true
        }
    }

    func setRequestBodyPaused(_ exchange: ServerExchange, _ paused: Bool) {
        guard exchange === self.exchange, requestPhase == .body else { return }
        if !paused && continuePending {
            continuePending = false
            output.append(contentsOf: Self.continueResponse)
            scheduleFlush()
        }
        guard bodyPaused != paused else { return }
        bodyPaused = paused
        if !paused { scheduleProcessing() }
        updateInterest()
    }

    private static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    // MARK: writing

    /// Flushes once per loop iteration, so that a head and the first body bytes (or a
    /// whole small response) leave in one send.
    private func scheduleFlush() {
        guard !flushScheduled, !closed else { return }
        if !processScheduled { loop.runAfterEvents(self) }
        flushScheduled = true
    }

    private func scheduleProcessing() {
        guard !processScheduled, !closed else { return }
        if !flushScheduled { loop.runAfterEvents(self) }
        processScheduled = true
    }

    /// Runs what `scheduleProcessing` and `scheduleFlush` asked for, once per loop turn:
    /// pipelined requests first, then one send for everything queued.
    func runDeferredWork() {
        let process = processScheduled
        let flushNow = flushScheduled
        processScheduled = false
        flushScheduled = false
        if process && !closed { processInput() }
        if flushNow && !closed { flush() }
        if !closed { updateInterest() }
    }

    private func flush() {
        guard !closed else { return }
        while outputOffset < output.count {
            let written: Int
            do {
                written = try output.withUnsafeBytes { all throws(SystemError) in
                    try socket.send(UnsafeRawBufferPointer(rebasing: all[outputOffset...]))
                }
            } catch {
                return peerVanished()
            }
            if written == 0 { break }
            outputOffset += written
        }
        if outputOffset == output.count {
            outputOffset = 0
            // A small buffer is kept for the next response; a large one (left by a big or
            // slow download) is not kept by a connection that may now sit idle for long.
            output.removeAll(keepingCapacity: output.capacity <= (exchange != nil ? 1 << 20 : 2048))
            if closeAfterFlush { return lingerThenClose() }
        } else if outputOffset > 64 * 1024 && outputOffset * 2 > output.count {
            output.removeFirst(outputOffset)
            outputOffset = 0
        }
        if overHighWater && pendingOutput <= server.settings.outboundHighWater / 4 {
            overHighWater = false
            handler?.responseDrained()
        }
        updateTimer()
    }

    // MARK: interest, timers, closing

    private func updateInterest() {
        guard !closed, !lingering, let registration else { return }
        var wanted: IOEvents = []
        if pendingOutput > 0 { wanted.insert(.writable) }
        // Read while there is room; stop when the buffer is full (backpressure on the
        // client), except that a head still being received may grow the buffer.
        if !closeAfterFlush && (!input.isFull || (requestPhase == .awaitingHead && exchange == nil)) {
            wanted.insert(.readable)
        }
        guard wanted != interest else { return }
        interest = wanted
        do {
            try loop.modify(registration, events: wanted)
        } catch {
            close()
        }
    }

    private func updateTimer() {
        guard !closed, !lingering else { return }
        let settings = server.settings
        if let exchange, !exchange.finished {
            let waitingOnClient = pendingOutput > 0 || (requestPhase == .body && !bodyPaused)
            if waitingOnClient {
                timerMode = .waitingOnClient
                loop.arm(timer, after: settings.idleTimeout)
            } else if timerMode != .none {
                timerMode = .none
                loop.disarm(timer)
            }
        } else if let started = headStartedAt, !input.isEmpty {
            if timerMode != .head {
                timerMode = .head
                loop.arm(timer, at: started.advanced(by: settings.headTimeout))
            }
        } else {
            // Idle keep-alive connection, or a response still draining to the client.
            if timerMode != .idle || pendingOutput > 0 {
                timerMode = .idle
                loop.arm(timer, after: settings.idleTimeout)
            }
        }
    }

    private func timerFired() {
        switch timerMode {
        case .head:
            timerMode = .none
            reject(ErrorDocument(status: 408, error: "request_timeout", message: "the request head did not arrive in time"))
        case .waitingOnClient:
            peerVanished()
        case .idle, .none:
            close()
        }
    }

    /// Closing with unread bytes in the kernel's receive buffer makes it send a reset,
    /// which can destroy the response before the client reads it. So half-close, read and
    /// discard what still arrives for a moment, then close (nginx's lingering close).
    private func lingerThenClose() {
        guard !lingering else { return }
        if let registration, interest != .readable {
            interest = .readable
            try? loop.modify(registration, events: .readable)
        }
        lingering = true
        socket.shutdownWrite()
        input.consume(input.readableCount)
        timerMode = .none
        loop.arm(timer, after: .seconds(2))
    }

    private func discardUntilClosed() {
        while !closed {
            let space = input.writableSpace()
            let count: Int?
            do {
                count = try socket.read(into: space)
            } catch {
                return close()
            }
            guard let count else { return }
            if count == 0 { return close() }
        }
    }

    /// The client closed, reset or stalled: stop the work done for it and close.
    private func peerVanished() {
        let handler = self.handler
        if let exchange, !exchange.finished {
            exchange.aborted = true
            exchange.finished = true
        }
        self.handler = nil
        self.exchange?.connection = nil
        self.exchange = nil
        handler?.exchangeAborted()
        close()
    }

    /// Closes now. Safe to call more than once.
    func close() {
        guard !closed else { return }
        closed = true
        exchange?.connection = nil
        loop.disarm(timer)
        if let registration { loop.unregister(registration) }
        registration = nil
        socket.close()
        server.connectionClosed(self)
    }

    /// Graceful shutdown: idle connections close now, busy ones after their response.
    func beginShutdown() {
        if isIdle {
            close()
        } else {
            keepAlive = false
            if exchange == nil { closeAfterFlush = true }
        }
    }
}
