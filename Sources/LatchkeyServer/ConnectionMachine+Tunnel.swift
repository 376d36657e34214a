import LatchkeyLoop

/// CONNECT tunnels (RFC 9110 §9.3.6): the `200` first, then either the TLS handshake of an
/// intercepted tunnel or a relay whose two directions end one at a time (RFC 9293 §3.6: a
/// half close says "nothing more from me" and the other way stays open).
extension ConnectionMachine {
    /// What a tunnel becomes once its answer (`200`, or `101` for an upgrade) has been
    /// written.
    enum TunnelKind: Equatable {
        /// TLS ends here; the requests inside are served like any others.
        case intercept
        /// Bytes go both ways unread.
        case relay(RelayKind)
    }

    enum RelayKind: Equatable {
        /// A CONNECT to a `tunnel:` host: timed by the tunnel idle timeout.
        case tunnel
        /// A request's `101 Switching Protocols`: timed by the upgrade idle timeout, if any;
        /// a WebSocket one is closed with a close frame at shutdown.
        case upgrade(webSocket: Bool)
    }

    /// One direction of a relayed tunnel.
    enum RelayFlow: Equatable {
        /// Its sender may send more.
        case open
        /// Shutting down a WebSocket: a close frame is owed at this direction's next frame
        /// boundary; its sender is read until then.
        case closing
        /// Its sender finished (or was cut off after a close frame); bytes are still on
        /// their way.
        case draining
        /// Everything was delivered and the receiver was told that nothing more follows.
        case finished

        var isReading: Bool { self == .open || self == .closing }
    }

    struct Relay: Equatable {
        var kind: RelayKind
        /// Client to upstream.
        var toUpstream = RelayFlow.open
        /// Upstream to client.
        var toClient = RelayFlow.open
    }

    enum RelaySide: Equatable {
        case client
        case upstream
    }

    /// What the glue does next for a relayed tunnel.
    enum RelayStep: Equatable {
        case none
        /// Everything for `side` was delivered and its sender finished: half-close towards it.
        case finishSending(to: RelaySide)
        /// Both directions are finished: close both sides.
        case close
        /// Write a close frame towards `side` now, at a frame boundary; its sender is no
        /// longer read, and the direction ends once the frame is delivered.
        case sendClose(to: RelaySide)
    }

    var isRelaying: Bool {
        if case .relaying = state { return true }
        return false
    }

    /// The handler opened a tunnel for the current exchange (a CONNECT, whose request is
    /// complete and unanswered): its `200` goes out, then the tunnel starts. False when the
    /// exchange cannot become one.
    mutating func tunnelOpened(_ kind: TunnelKind) -> Bool {
        guard case .exchange(let exchange) = state, exchange.response == .waiting, exchange.request == .complete else { return false }
        state = .openingTunnel(kind)
        return true
    }

    /// The `200` of an intercepting tunnel was written at `now`: the client's TLS handshake
    /// comes next, within `timeout`.
    mutating func interceptionStarted(at now: LoopInstant, handshakeTimeout timeout: Duration) {
        guard case .openingTunnel(.intercept) = state else { return }
        state = .handshaking(since: now, timeout: timeout)
    }

    /// The answer of a relaying tunnel was written: bytes flow both ways from now.
    mutating func relayStarted() {
        guard case .openingTunnel(.relay(let kind)) = state else { return }
        state = .relaying(Relay(kind: kind))
    }

    /// Whether to read the upstream: its direction is open and the client's output is below
    /// the high-water mark (backpressure on the upstream otherwise).
    func wantsUpstreamInput(outputPending: Int, highWater: Int) -> Bool {
        guard case .relaying(let relay) = state else { return false }
        return relay.toClient.isReading && outputPending < highWater
    }

    /// Whether a close frame is owed towards `side` (its direction is `closing`).
    func owesCloseFrame(towards side: RelaySide) -> Bool {
        guard case .relaying(let relay) = state else { return false }
        return (side == .upstream ? relay.toUpstream : relay.toClient) == .closing
    }

    /// The bytes queued towards `side` end at a frame boundary: a close frame owed there
    /// goes out now.
    mutating func relayFrameBoundary(towards side: RelaySide) -> RelayStep {
        guard case .relaying(var relay) = state else { return .none }
        if side == .upstream, relay.toUpstream == .closing {
            relay.toUpstream = .draining
        } else if side == .client, relay.toClient == .closing {
            relay.toClient = .draining
        } else {
            return .none
        }
        state = .relaying(relay)
        return .sendClose(to: side)
    }

    /// Nothing more goes either way between the client and the relay: the client finished
    /// sending, and everything for it was delivered and its end passed on.
    var relayIsDoneWithClient: Bool {
        guard case .relaying(let relay) = state else { return false }
        return !relay.toUpstream.isReading && relay.toClient == .finished
    }

    /// A close frame already went towards `side` (its peer began the closing handshake): none
    /// is owed there, and the direction is relayed until its sender ends it (RFC 6455 §5.5.1
    /// forbids a second).
    mutating func relayCloseAlreadySent(towards side: RelaySide) {
        guard case .relaying(var relay) = state else { return }
        if side == .upstream, relay.toUpstream == .closing { relay.toUpstream = .open }
        if side == .client, relay.toClient == .closing { relay.toClient = .open }
        state = .relaying(relay)
    }

    /// `side` finished sending (end of stream). `undelivered`: bytes it sent still wait to
    /// be written to the other side, which is told of the end once they are.
    mutating func relayPeerFinished(_ side: RelaySide, undelivered: Bool) -> RelayStep {
        let receiver: RelaySide = side == .client ? .upstream : .client
        return updateRelay(towards: receiver) { flow in
            guard flow.isReading else { return false }
            flow = undelivered ? .draining : .finished
            return !undelivered
        }
    }

    /// Every byte waiting for `side` has been written to it.
    mutating func relayDelivered(to side: RelaySide) -> RelayStep {
        updateRelay(towards: side) { flow in
            guard flow == .draining else { return false }
            flow = .finished
            return true
        }
    }

    /// The client's output was flushed down to `pending` bytes.
    mutating func relayOutputFlushed(pending: Int) -> RelayStep {
        pending == 0 ? relayDelivered(to: .client) : .none
    }

    /// Applies `change` to the direction towards `side`; when it finishes that direction,
    /// the step is the half close, or the close once both are finished.
    private mutating func updateRelay(towards side: RelaySide, _ change: (inout RelayFlow) -> Bool) -> RelayStep {
        guard case .relaying(var relay) = state else { return .none }
        let finished = side == .upstream ? change(&relay.toUpstream) : change(&relay.toClient)
        state = .relaying(relay)
        guard finished else { return .none }
        return relay.toUpstream == .finished && relay.toClient == .finished ? .close : .finishSending(to: side)
    }
}
