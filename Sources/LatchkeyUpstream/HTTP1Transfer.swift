import LatchkeyHTTP
import LatchkeyLoop

/// One request/response exchange that Latchkey frames itself over a raw upstream
/// connection: the glue that feeds an `HTTP1ExchangeMachine` the connection's readiness,
/// the delegate's calls and the timers, and does what it returns.
///
/// The connection comes from the loop's `ConnectionPool` when one idles there for the
/// request's `ConnectionKey`; else libcurl makes one (`UpstreamClient.connect`: DNS, TLS
/// with the route's settings, client certificate, proxy, connect timeout). It goes back to
/// the pool when the exchange leaves it fit for another, and is closed otherwise.
///
/// The delegate hears what a `CurlTransfer`'s hears, under the same rules: the finish and a
/// request for more body never from inside a call the caller made on the transfer.
///
/// The exchange is its own timer (`LoopTimer`), armed at the earlier of its first-byte and
/// idle deadlines (`ExchangeDeadlines`): a request allocates no timer object and no closure
/// context.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
public final class HTTP1Transfer: LoopTimer, UpstreamTransfer, IOHandler, UpstreamConnectionDelegate, DeferredWork {
    /// Held, not `unowned`: an unowned reference costs more per transfer than a strong one
    /// (the object's unowned count and a checked load), and a transfer ends before its
    /// client.
    let client: UpstreamClient
    /// Shared with the route: the connection's own options are its.
    private let key: ConnectionKey
    private let connectTimeout: Duration
    private let firstByteTimeout: Duration
    private let idleTimeout: Duration
    /// `scheme://authority`: libcurl connects to its `/`.
    private let origin: String
    @exclusivity(unchecked) private var machine: HTTP1ExchangeMachine
    /// Nil once finished or cancelled: nothing is reported any more.
    @exclusivity(unchecked) private var delegate: UpstreamTransferDelegate?
    /// The connection the request is on; nil while none is ready, and after the end.
    @exclusivity(unchecked) private var pooled: PooledConnection?
    /// The connection libcurl is making for this exchange.
    @exclusivity(unchecked) private var connecting: UpstreamConnection?
    /// Bytes wait for the connection to take them.
    @exclusivity(unchecked) private var wantsWritable = false
    /// Depth of the caller's calls on the transfer: a finish waits for the loop meanwhile.
    @exclusivity(unchecked) private var callerDepth = 0
    /// The response is being decoded: a resume from inside a delivery leaves the decoding
    /// to the loop already running it.
    @exclusivity(unchecked) private var decoding = false
    @exclusivity(unchecked) private var cancelled = false
    /// The transfer itself from its start to its finish or cancel: it lives until then, as
    /// a `CurlTransfer` does in its client's list, whoever else holds it (the connection
    /// being made holds its delegate weakly).
    @exclusivity(unchecked) private var running: HTTP1Transfer?
    @exclusivity(unchecked) private var wantsBodyScheduled = false
    @exclusivity(unchecked) private var writeScheduled = false
    private let startedAt: LoopInstant
    @exclusivity(unchecked) public private(set) var upstreamTime: Duration?
    @exclusivity(unchecked) public private(set) var connectionUse = ConnectionUse()
    @exclusivity(unchecked) private var deadlines = ExchangeDeadlines()

    public var bytesSent: UInt64 { machine.bytesSent }
    public var bytesReceived: UInt64 { machine.bytesReceived }
    public var queuedBodyBytes: Int { machine.queuedBodyBytes }

    /// The client's, held here: reached through `client`, each use retained it again,
    /// several times per request.
    private let loop: EventLoop
    private let pool: ConnectionPool

    /// Nil when the request cannot be written (a URL that is not absolute, a method or
    /// target that is not fit for a request line).
    init?(client: UpstreamClient, request: borrowing UpstreamRequest, delegate: UpstreamTransferDelegate) {
        guard !request.target.isEmpty, let head = request.encodedHead() else { return nil }
        self.client = client
        self.delegate = delegate
        key = request.connectionKey ?? ConnectionKey(origin: request.origin, options: request.options)
        connectTimeout = request.options.connectTimeout
        firstByteTimeout = request.options.firstByteTimeout
        idleTimeout = request.options.idleTimeout
        origin = request.origin
        loop = client.loop
        pool = client.pool
        startedAt = client.loop.now
        machine = HTTP1ExchangeMachine(head: head, method: request.method, body: request.body,
                                       requestCloses: request.asksToClose,
                                       idleTimeout: request.options.idleTimeout, now: client.loop.now)
    }

    /// Takes an idle connection from the pool, or has libcurl make one.
    func start() {
        callerDepth += 1
        defer { callerDepth -= 1 }
        running = self
        if idleTimeout > .zero { setDeadlines(idle: loop.now.advanced(by: idleTimeout)) }
        if let pooled = pool.take(key) {
            connectionUse.reused = true
            attach(pooled, reused: true)
        } else {
            openConnection()
        }
    }

    // MARK: UpstreamTransfer

    public func sendBody(_ bytes: UnsafeRawBufferPointer) {
        callerDepth += 1
        defer { callerDepth -= 1 }
        if machine.bodyAvailable(bytes) { scheduleWrite() }
    }

    public func finishBody() {
        callerDepth += 1
        defer { callerDepth -= 1 }
        switch machine.bodyEnded() {
        case .write: scheduleWrite()
        case .none: break
        case .fail(let error): finish(keepingConnection: false, error: error)
        }
    }

    public func resumeReceiving() {
        callerDepth += 1
        defer { callerDepth -= 1 }
        guard machine.resumeReceiving(now: loop.now) else { return }
        updateInterest()
        decodeInput()
        // Decrypted bytes curl holds show no readiness: read them now. A plain socket's
        // are reported again once `updateInterest` asks for them.
        if pooled?.connection.mayHoldReadBytes == true { readInput() }
    }

    public func cancel() {
        cancelled = true
        delegate = nil
        guard machine.cancel() else { return }
        upstreamTime = loop.now.since(startedAt)
        stopTimers()
        connecting?.close()
        connecting = nil
        release(keepingConnection: false)
        running = nil
    }

    // MARK: the connection

    private func openConnection() {
        guard let connection = client.connect(to: origin + "/", options: key.connectionOptions(connectTimeout: connectTimeout),
                                                  delegate: self) else {
            return fail(UpstreamError(.other, detail: "curl_easy_init failed"))
        }
        connecting = connection
    }

    public func upstreamConnected(_ connection: UpstreamConnection) {
        guard connection === connecting else { return connection.close() }
        connecting = nil
        connectionUse.opened += 1
        attach(PooledConnection(connection: connection, key: key, pool: pool), reused: false)
    }

    public func upstreamConnectFailed(_ connection: UpstreamConnection, error: UpstreamError) {
        guard connection === connecting else { return }
        connecting = nil
        fail(error)
    }

    /// The head goes out after the loop's batch of events, with the other exchanges'
    /// heads, rather than at once: the upstream then wakes once for several requests
    /// (about half as many wake-ups as writing each at once, and the proxy pays for each
    /// wake-up it causes), and a body that is already here goes in the same write.
    private func attach(_ pooled: PooledConnection, reused: Bool) {
        self.pooled = pooled
        pooled.user = self
        machine.connected(reused: reused)
        scheduleWrite()
        updateInterest()
    }

    /// Readable unless the delegate paused the response; writable while bytes wait.
    private func updateInterest() {
        guard let pooled, machine.isExchanging else { return }
        var events: IOEvents = wantsWritable ? [.writable] : []
        if machine.response != .streaming(paused: true) { events.insert(.readable) }
        do {
            try pooled.watch(events)
        } catch {
            fail(UpstreamError(.other, detail: "watching the upstream: \(error)"))
        }
    }

    public func handleIO(_ events: IOEvents) {
        if events.contains(.writable) { writeOutput() }
        if pooled != nil, !events.isDisjoint(with: [.readable, .hangup, .error]) { readInput(peerFinished: events.contains(.hangup)) }
    }

    // MARK: writing

    private func writeOutput() {
        guard let pooled else { return }
        while self.pooled === pooled {
            switch machine.nextWrite() {
            case .write:
                let sent: Int?
                do {
                    sent = try machine.sendUnwritten(now: loop.now) { (bytes) throws(SystemError) -> Int? in try pooled.connection.send(bytes) }
                } catch {
                    return connectionLost(UpstreamError(.sendFailed, detail: "\(error)"), whileWriting: true)
                }
                guard let sent, sent > 0 else { return setWritable(true) }
            case .waitForBody(let askClient):
                setWritable(false)
                if askClient { scheduleWantsBody() }
                return
            case .requestWritten:
                setWritable(false)
                if firstByteTimeout > .zero { setDeadlines(firstByte: loop.now.advanced(by: firstByteTimeout)) }
                return
            case .none:
                return setWritable(false)
            }
        }
    }

    /// Writes what the body added after the current events, once: the pieces one read of
    /// the client's brought (a chunk's end, the next one's start, the last chunk) go out in
    /// one send instead of one each.
    private func scheduleWrite() {
        guard !writeScheduled else { return }
        writeScheduled = true
        loop.runAfterEvents(self)
    }

    public func runDeferredWork() {
        writeScheduled = false
        writeOutput()
    }

    private func setWritable(_ writable: Bool) {
        guard wantsWritable != writable else { return }
        wantsWritable = writable
        updateInterest()
    }

    /// Asks the delegate for more request body after the current events, once per stall.
    private func scheduleWantsBody() {
        guard !wantsBodyScheduled else { return }
        wantsBodyScheduled = true
        loop.runAfterEvents { [self] in
            wantsBodyScheduled = false
            guard machine.upload == .open(asked: true) else { return }
            delegate?.upstreamWantsBody(self)
        }
    }

    // MARK: reading

    /// `peerFinished`: epoll reported the upstream's end of sending (EPOLLRDHUP), which a
    /// read that leaves the socket empty of bytes has not reached yet; the edge-triggered
    /// watch will not report it again, so reading goes on to it.
    private func readInput(peerFinished: Bool = false) {
        while let pooled, machine.isExchanging, machine.response != .streaming(paused: true) {
            let read: (count: Int?, filled: Bool)
            do {
                read = try pooled.input.read(from: pooled.connection)
            } catch {
                return connectionLost(UpstreamError(.receiveFailed, detail: "\(error)"), whileWriting: false)
            }
            pooled.mayHaveUnreadInput = read.filled || peerFinished
            guard let count = read.count else { return }
            decodeInput()
            if count == 0 {
                // Every byte before the close is decoded unless the delegate paused; then
                // the close is read again after the resume.
                if self.pooled === pooled, machine.response != .streaming(paused: true) { peerClosed() }
                return
            }
            // A plain socket that did not fill the space is drained of bytes; epoll says when
            // more comes, but not of an end it already reported. curl may hold decrypted
            // bytes the socket no longer shows.
            guard read.filled || peerFinished || pooled.connection.mayHoldReadBytes else { return }
        }
    }

    private func decodeInput() {
        guard let pooled, !decoding else { return }
        decoding = true
        defer { decoding = false }
        while self.pooled === pooled {
            let step = machine.received(pooled.input.readable, now: loop.now)
            switch step.event {
            case .needMore:
                return pooled.input.consume(step.consumed)
            case .paused:
                return
            case .head(let status, let fields, let declared):
                pooled.input.consume(step.consumed)
                deadlines.firstByte = nil
                delegate?.upstreamDidReceiveHead(self, status: status, fields: fields, declared: declared)
            case .body(let range):
                let body = UnsafeRawBufferPointer(rebasing: pooled.input.readable[range])
                let more = delegate?.upstreamDidReceiveBody(self, body) ?? true
                pooled.input.consume(step.consumed)
                if machine.delivered(more: more) { return updateInterest() }
            case .complete(let reusable):
                pooled.input.consume(step.consumed)
                return finish(keepingConnection: reusable, error: nil)
            case .fail(let error):
                return finish(keepingConnection: false, error: error)
            }
        }
    }

    private func peerClosed() {
        handle(machine.peerClosed())
    }

    private func connectionLost(_ error: UpstreamError, whileWriting: Bool) {
        handle(machine.connectionFailed(error, whileWriting: whileWriting))
    }

    private func handle(_ step: HTTP1ExchangeMachine.LossStep) {
        switch step {
        case .ignore:
            break
        case .readOn:
            setWritable(false)
        case .resend:
            connectionUse.resent = true
            deadlines.firstByte = nil
            release(keepingConnection: false)
            openConnection()
        case .complete:
            finish(keepingConnection: false, error: nil)
        case .fail(let error):
            finish(keepingConnection: false, error: error)
        }
    }

    // MARK: timers

    /// The timer: a deadline passed, or one dropped since it was armed (nothing to do then
    /// but arm it at the other).
    override public func timerFired() {
        let passed = deadlines.takePassed(now: loop.now)
        if passed.firstByte { firstByteTimerFired() }
        if passed.idle, running != nil { idleTimerFired() }
        if running != nil { armTimer() }
    }

    /// Sets the deadlines given and arms the timer at the earlier.
    private func setDeadlines(firstByte: LoopInstant? = nil, idle: LoopInstant? = nil) {
        if let firstByte { deadlines.firstByte = firstByte }
        if let idle { deadlines.idle = idle }
        armTimer()
    }

    private func armTimer() {
        guard let next = deadlines.next else { return loop.disarm(self) }
        if next != armedDeadline { loop.arm(self, at: next) }
    }

    private func firstByteTimerFired() {
        guard let error = machine.firstByteTimerFired() else { return }
        finish(keepingConnection: false, error: error)
    }

    private func idleTimerFired() {
        switch machine.idleTimerFired(now: loop.now) {
        case .ignore: break
        case .rearm(let deadline): deadlines.idle = deadline
        case .fail(let error): finish(keepingConnection: false, error: error)
        }
    }

    private func stopTimers() {
        deadlines = ExchangeDeadlines()
        loop.disarm(self)
    }

    // MARK: the end

    /// The exchange fails for a reason of ours or of libcurl's, not the machine's.
    private func fail(_ error: UpstreamError) {
        finish(keepingConnection: false, error: machine.end(error))
    }

    /// The exchange is over: the connection goes back to the pool or is closed, then the
    /// delegate hears (after the current events when inside the caller's call).
    private func finish(keepingConnection: Bool, error: UpstreamError?) {
        stopTimers()
        connecting?.close()
        connecting = nil
        release(keepingConnection: keepingConnection)
        upstreamTime = loop.now.since(startedAt)
        running = nil
        guard let delegate else { return }
        self.delegate = nil
        guard callerDepth > 0 else { return delegate.upstreamDidFinish(self, error: error) }
        loop.runAfterEvents { [self] in
            if !cancelled { delegate.upstreamDidFinish(self, error: error) }
        }
    }

    private func release(keepingConnection: Bool) {
        guard let pooled else { return }
        self.pooled = nil
        wantsWritable = false
        if keepingConnection {
            pool.park(pooled)
        } else {
            pooled.close()
        }
    }
}
