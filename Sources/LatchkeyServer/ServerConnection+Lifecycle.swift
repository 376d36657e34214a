import LatchkeyHTTP
import LatchkeyLoop

/// Epoll interest, the one timer per connection (idle, head, waiting on the client), and
/// the ways a connection ends: lingering close, a vanished peer, graceful shutdown.
extension ServerConnection {
    func updateInterest() {
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

    func updateTimer() {
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
            // Idle keep-alive connection, or a response still draining to the client. A
            // head clock left by bytes that were consumed (a stray CRLF between requests)
            // must not time the next head.
            if input.isEmpty { headStartedAt = nil }
            if timerMode != .idle || pendingOutput > 0 {
                timerMode = .idle
                loop.arm(timer, after: settings.idleTimeout)
            }
        }
    }

    func timerFired() {
        switch timerMode {
        case .head:
            timerMode = .none
            reject(ErrorDocument(status: 408, error: "request_timeout", message: "the request head did not arrive in time"))
        case .waitingOnClient:
            close()
        case .idle, .none:
            close()
        }
    }

    /// Closing with unread bytes in the kernel's receive buffer makes it send a reset,
    /// which can destroy the response before the client reads it. So half-close, read and
    /// discard what still arrives for a moment, then close (nginx's lingering close).
    func lingerThenClose() {
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

    func discardUntilClosed() {
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

    /// Closes now, telling the handler of an unfinished exchange so that it stops the
    /// work done for it (every way a connection ends comes through here). Safe to call
    /// more than once.
    func close(reason: ExchangeEnd = .clientGone) {
        guard !closed else { return }
        closed = true
        let handler = self.handler
        if let exchange, !exchange.finished {
            exchange.aborted = true
            exchange.finished = true
        }
        self.handler = nil
        exchange?.connection = nil
        exchange = nil
        handler?.exchangeAborted(reason)
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
