import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyTLS

/// Epoll interest, the one timer per connection (when and what for: the machine's), and
/// the ways a connection ends: lingering close, a vanished peer, graceful shutdown.
extension ServerConnection {
    func updateInterest() {
        guard !machine.isClosed, !machine.isLingering else { return }
        var wanted: IOEvents = []
        if pendingOutput > 0 { wanted.insert(.writable) }
        if machine.wantsInput(bufferFull: inputIsFull) { wanted.insert(.readable) }
        if !crossedTLSWait.isEmpty { wanted = crossedTLSWait.interest(wanted) }
        setInterest(edgeTriggered(wanted))
        if relay != nil { updateUpstreamInterest() }
    }

    /// A plain connection serving HTTP is watched edge-triggered, as nginx watches its
    /// sockets: level-triggered epoll looks at every socket it reported again at the next
    /// wait, a cost per request in the kernel. Its reads go on until the socket is drained,
    /// or ask for the socket again when they stop before (`readInput`); its writes go on
    /// until the socket is full. A TLS session can hold decrypted bytes epoll does not see,
    /// and a relay reads a piece per turn: both stay level-triggered.
    func edgeTriggered(_ wanted: IOEvents) -> IOEvents {
        guard tls == nil, !machine.isRelaying, !wanted.isEmpty else { return wanted }
        return wanted.union(.edgeTriggered)
    }

    /// Bytes left in the socket, or its end, are reported again at the next wait, as
    /// level-triggered epoll would: an edge-triggered registration is asked for its events
    /// again (with read interest dropped meanwhile, nothing is reported).
    func readAgainNextTurn() {
        guard let registration, interest.contains(.edgeTriggered) else { return }
        do {
            try loop.modify(registration, events: interest)
        } catch {
            close()
        }
    }

    func setInterest(_ wanted: IOEvents) {
        guard let registration, wanted != interest else { return }
        interest = wanted
        do {
            try loop.modify(registration, events: wanted)
        } catch {
            close()
        }
    }

    /// The machine's deadline as of the connection's last activity. Lazily, as nginx's
    /// timers: a deadline later than the armed one (the next request's keep-alive, a
    /// response's progress), or none at all, leaves the timer armed where it is, and
    /// `deadlinePassed` works the deadline out again when it fires. Keep-alive traffic then
    /// moves nothing in the loop's heap per request, where it moved the timer twice.
    func updateTimer() {
        guard !machine.isClosed, !machine.isLingering else { return }
        lastActivity = loop.now
        guard let deadline = currentDeadline else { return }
        if let armed = armedDeadline, armed <= deadline { return }
        loop.arm(self, at: deadline)
    }

    /// When the machine's timeout falls, counted from the last activity; nil for none.
    private var currentDeadline: LoopInstant? {
        machine.timerDeadline(now: lastActivity, outputPending: pendingOutput > 0, settings: server.settings)
    }

    private func setTimer(_ deadline: LoopInstant?) {
        // An unchanged deadline costs nothing.
        guard deadline != armedDeadline else { return }
        if let deadline {
            loop.arm(self, at: deadline)
        } else {
            loop.disarm(self)
        }
    }

    func deadlinePassed() {
        // The timer may be one `updateTimer` left early: the deadline as of now decides.
        guard let deadline = currentDeadline else { return }
        if deadline > loop.now { return loop.arm(self, at: deadline) }
        switch machine.timerFired(at: loop.now) {
        case .headTimedOut(let document):
            reject(document)
        case .bodyTimedOut(let document):
            failRequestBody(document)
        case .handshakeTimedOut(let timeout):
            handshakeFailed(TLSHandshakeFailure(.timeout, detail: "the handshake did not complete within \(timeout)"))
        case .tunnelIdle:
            endRelay(.idle)
        case .close:
            close()
        }
    }

    /// Closing with unread bytes in the kernel's receive buffer makes it send a reset,
    /// which can destroy the response before the client reads it. So half-close, read and
    /// discard what still arrives for a moment, then close (nginx's lingering close).
    func lingerThenClose() {
        guard machine.linger(at: loop.now) else { return }
        if let registration, interest != .readable {
            interest = .readable
            try? loop.modify(registration, events: .readable)
        }
        tls?.shutdown()
        socket.shutdownWrite()
        if let reader { reader.input.consume(reader.input.readableCount) }
        lastActivity = loop.now
        setTimer(currentDeadline)
    }

    func discardUntilClosed() {
        while !machine.isClosed {
            let space = heldReader.input.writableSpace()
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

    /// Closes now, telling the handler of an unfinished exchange so that it stops the
    /// work done for it (every way a connection ends comes through here). Safe to call
    /// more than once.
    func close(reason: ExchangeEnd = .clientGone) {
        if relay != nil {
            // Closed from outside the relay (the grace period's end, a failed write):
            // the tunnel ends first, and comes back here.
            return endRelay(server.isShuttingDown ? .shutdown : .failed(detail: "the client connection closed"))
        }
        pendingTunnel?.upstream?.close()
        pendingTunnel = nil
        guard machine.close() else { return }
        let handler = self.handler
        // OpenSSL 3 clients report a close without close_notify as an unexpected EOF. A
        // response cut short gets none: RFC 9112 §9.8, the client must see the cut.
        if exchange == nil { tls?.shutdown() }
        if let exchange, !exchange.finished {
            exchange.record.aborted = true
            exchange.record.finished = true
        }
        self.handler = nil
        exchange?.connection = nil
        exchange = nil
        handler?.exchangeAborted(reason)
        setTimer(nil)
        if let registration { loop.unregister(registration) }
        registration = nil
        socket.close()
        server.connectionClosed(self)
    }

    /// Graceful shutdown: idle connections close now, busy ones after their response.
    /// A connection still handshaking closes unreported (`ConnectionMachine.State.handshaking`).
    func beginShutdown() {
        switch machine.shutdown(outputPending: pendingOutput > 0) {
        case .close:
            close()
        case .closeWebSocket:
            closeWebSocketAtFrameBoundaries()
        case .flushThenClose:
            flush()
        case .finishExchange:
            break
        }
    }
}
