import LatchkeyHTTP
import LatchkeyLoop

/// The response side: framing the head, body bytes, the end (normal or cut short),
/// backpressure on the output buffer, and the ways the connection ends.
extension ConnectionMachine {
    /// How to frame a response head, and the `Connection` field it needs.
    struct HeadPlan: Equatable {
        var framing: ResponseFraming
        var connection: ConnectionField?
    }

    enum ConnectionField: Equatable {
        case close
        /// An HTTP/1.0 client keeps the connection only when told so.
        case keepAlive
    }

    /// What to do with body bytes handed over by the handler.
    enum BodyWrite: Equatable {
        /// Nothing goes out (no head yet, or a response that carries no body).
        case discard
        /// The first `count` bytes as they are.
        case raw(count: Int)
        /// All of them as one chunk.
        case chunk
    }

    enum FinishAction: Equatable {
        /// Fewer bytes than the `Content-Length` promised: the client must see a cut, not a
        /// short success.
        case cutShort
        /// Done; `lastChunk`: write the chunked terminator.
        case ended(lastChunk: Bool)
    }

    enum FlushAction: Equatable {
        case none
        /// Everything written and nothing more will come: close, lingering.
        case linger
        /// Below the low-water mark again: tell the handler to send more.
        case drained
        /// A CONNECT's `200` has left: the tunnel starts now.
        case startTunnel(TunnelKind)
        /// A relayed tunnel's output changed: `RelayStep` says what follows.
        case relay(RelayStep)
    }

    enum ShutdownAction: Equatable {
        case close
        /// An upgraded WebSocket stream: close frames are owed both ways at the next frame
        /// boundaries (`relayFrameBoundary`).
        case closeWebSocket
        /// Close once what is queued has been written.
        case flushThenClose
        /// Let the exchange finish; the connection closes after its response.
        case finishExchange
    }

    /// The handler starts its response. Nil when a response was already started.
    mutating func responseHeadStarting(carriesBody: Bool, contentLength: UInt64?, version: HTTPVersion) -> HeadPlan? {
        guard case .exchange(var exchange) = state, exchange.response == .waiting else { return nil }
        if case .awaitingContinue(let budget) = exchange.request {
            // The client is waiting to be told to send its body and never was: it cannot
            // reuse this connection.
            exchange.request = .paused(budget: budget)
            exchange.keepAlive = false
        }
        let framing: ResponseFraming
        if !carriesBody {
            framing = .bodiless
        } else if let contentLength {
            framing = .length(remaining: contentLength)
        } else if version == .http1_1 {
            framing = .chunked
        } else {
            framing = .closeDelimited
            exchange.keepAlive = false
        }
        if exchange.request != .complete {
            // Answered while the request body is still arriving (an early error, an
            // upstream that does not wait): closing is the only safe way to resynchronise.
            exchange.keepAlive = false
        }
        exchange.response = .writing(framing, throttled: false)
        state = .exchange(exchange)
        let connection: ConnectionField? = !exchange.keepAlive ? .close : version == .http1_0 ? .keepAlive : nil
        return HeadPlan(framing: framing, connection: connection)
    }

    /// The handler hands over `count` (> 0) body bytes.
    mutating func responseBody(count: Int) -> BodyWrite {
        guard case .exchange(var exchange) = state, case .writing(let framing, let throttled) = exchange.response else {
            return .discard
        }
        switch framing {
        case .bodiless:
            return .discard
        case .length(let remaining):
            let taken = Int(min(UInt64(count), remaining))
            exchange.response = .writing(.length(remaining: remaining - UInt64(taken)), throttled: throttled)
            state = .exchange(exchange)
            return .raw(count: taken)
        case .chunked:
            return .chunk
        case .closeDelimited:
            return .raw(count: count)
        }
    }

    /// Output was queued; `pending` bytes now wait for the socket. Returns whether the
    /// handler may send more now.
    mutating func outputQueued(pending: Int, highWater: Int) -> Bool {
        guard case .exchange(var exchange) = state, case .writing(let framing, let throttled) = exchange.response else {
            return true
        }
        guard !throttled else { return false }
        guard pending >= highWater else { return true }
        exchange.response = .writing(framing, throttled: true)
        state = .exchange(exchange)
        return false
    }

    /// Whether the handler may send more body bytes now.
    var acceptsResponseBody: Bool {
        guard case .exchange(let exchange) = state, case .writing(_, let throttled) = exchange.response else { return true }
        return !throttled
    }

    /// The handler finished its response. `inputBuffered`: bytes of the next request are
    /// already here (they start its head clock now); `mayKeepAlive`: the server is not
    /// shutting down.
    mutating func responseFinished(at now: LoopInstant, inputBuffered: Bool, mayKeepAlive: Bool) -> FinishAction {
        guard case .exchange(let exchange) = state else { return .ended(lastChunk: false) }
        var lastChunk = false
        var keepAlive = exchange.keepAlive && mayKeepAlive && exchange.request == .complete
        if case .writing(let framing, _) = exchange.response {
            switch framing {
            case .length(let remaining) where remaining > 0:
                return .cutShort
            case .chunked:
                lastChunk = true
            case .closeDelimited:
                keepAlive = false
            case .bodiless, .length:
                break
            }
        }
        if keepAlive {
            state = inputBuffered ? .readingHead(since: now) : .idle
        } else {
            state = .closingAfterFlush
        }
        return .ended(lastChunk: lastChunk)
    }

    /// The response was cut short (upstream failure, body error): close after what is
    /// queued, so that the client sees the cut.
    mutating func responseAborted() {
        guard case .exchange = state else { return }
        state = .closingAfterFlush
    }

    /// The socket took what it could; `pending` bytes are still queued.
    mutating func outputFlushed(pending: Int, highWater: Int) -> FlushAction {
        switch state {
        case .closingAfterFlush where pending == 0:
            return .linger
        case .openingTunnel(let kind) where pending == 0:
            return .startTunnel(kind)
        case .relaying:
            return .relay(relayOutputFlushed(pending: pending))
        case .exchange(var exchange):
            guard case .writing(let framing, true) = exchange.response, pending <= highWater / 4 else { return .none }
            exchange.response = .writing(framing, throttled: false)
            state = .exchange(exchange)
            return .drained
        default:
            return .none
        }
    }

    /// Begins a lingering close (nginx's): returns false if already lingering or closed.
    mutating func linger(at now: LoopInstant) -> Bool {
        switch state {
        case .lingering, .closed: return false
        default:
            state = .lingering(until: now.advanced(by: Self.lingerTime))
            return true
        }
    }

    /// Returns false if already closed.
    mutating func close() -> Bool {
        guard state != .closed else { return false }
        state = .closed
        return true
    }

    /// Graceful shutdown: idle connections close now, busy ones after their response.
    mutating func shutdown(outputPending: Bool) -> ShutdownAction {
        switch state {
        case .handshaking:
            return .close
        case .opened, .idle:
            guard outputPending else { return .close }
            state = .closingAfterFlush
            return .flushThenClose
        case .readingHead:
            state = .closingAfterFlush
            return .flushThenClose
        case .exchange(var exchange):
            exchange.keepAlive = false
            state = .exchange(exchange)
            return .finishExchange
        case .relaying(var relay) where relay.kind == .upgrade(webSocket: true):
            if relay.toUpstream == .open { relay.toUpstream = .closing }
            if relay.toClient == .open { relay.toClient = .closing }
            state = .relaying(relay)
            return .closeWebSocket
        // A tunnel's bytes are in flight: it ends on its own, or when the grace period
        // closes every connection.
        case .openingTunnel, .relaying, .closingAfterFlush, .lingering, .closed:
            return .finishExchange
        }
    }
}
