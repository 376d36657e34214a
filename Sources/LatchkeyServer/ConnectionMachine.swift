import LatchkeyHTTP
import LatchkeyLoop

/// The protocol state of one client connection, as a value: `ServerConnection` (the glue)
/// tells it what happened — bytes read, a head decoded, the handler's response, output
/// flushed, the timer fired, shutdown — and does what it answers. It does no I/O and reads
/// no clock: instants come with the events. Which timeout applies is a function of the
/// state (`timerDeadline`), never a mode kept beside it.
///
/// On a TLS listener a connection starts in `handshaking`, timed by the listener's
/// handshake timeout, and moves to `opened` when the handshake completes: the first head's
/// clock starts then (`ConnectionMachine+Handshake.swift`).
///
/// A forward listener's CONNECT turns the connection into a tunnel once its `200` has left
/// (`openingTunnel`): an intercepted one goes back to `handshaking`, now as the TLS server
/// of the tunnel's host, then serves requests as any connection does; a relayed one moves
/// bytes both ways unparsed (`relaying`) until both sides have finished
/// (`ConnectionMachine+Tunnel.swift`).
struct ConnectionMachine {
    enum State: Equatable {
        /// TLS listeners: accepted, the TLS handshake under way since `since`, allowed
        /// `timeout` (the listener's, or the head timeout for the handshake inside an
        /// intercepted tunnel); no HTTP yet. Graceful shutdown closes it without reporting a
        /// failed handshake: the client did nothing wrong, and the handshake failures metric
        /// counts clients' failures. (The timeout lives in the state, not beside it: 21
        /// bytes fewer in every connection, TLS or not.)
        case handshaking(since: LoopInstant, timeout: Duration)
        /// Accepted (on a TLS listener: handshake completed), nothing read yet: the first
        /// head's clock runs from then, so a client that sends nothing is closed at the
        /// head timeout.
        case opened(at: LoopInstant)
        /// Between requests on a kept-alive connection, nothing buffered.
        case idle
        /// Bytes of a head are buffered; `since` is when the first came (slow-loris
        /// defence: trickled bytes do not extend the head clock).
        case readingHead(since: LoopInstant)
        /// A request is being served: its body and its response progress independently.
        case exchange(Exchange)
        /// A CONNECT was answered `200`; the tunnel starts once that answer has been written.
        case openingTunnel(TunnelKind)
        /// A relayed tunnel: bytes go both ways unread, each direction ending on its own.
        case relaying(Relay)
        /// The last response is queued; the connection closes once it is written.
        case closingAfterFlush
        /// Write side shut down; what still arrives is discarded until `until`.
        case lingering(until: LoopInstant)
        case closed
    }

    struct Exchange: Equatable {
        var request: RequestBody
        var response: Response
        /// Whether the connection may carry another request after this one.
        var keepAlive: Bool
    }

    /// The request body's progress and its clock (`body_timeout` counts the time the server
    /// waits for the client, not the time the handler keeps the body paused).
    enum RequestBody: Equatable {
        /// `Expect: 100-continue`: the client waits for the interim response, which the
        /// handler's first resume sends.
        case awaitingContinue(budget: Duration)
        /// Read as it arrives; it must be complete by `deadline`.
        case reading(deadline: LoopInstant)
        /// The handler asked for no more for now; `budget` is the time left.
        case paused(budget: Duration)
        case complete
    }

    enum Response: Equatable {
        case waiting
        /// `throttled`: the output buffer went over its high-water mark and the handler was
        /// told to wait for `responseDrained`.
        case writing(ResponseFraming, throttled: Bool)
    }

    enum ResponseFraming: Equatable {
        case bodiless
        case length(remaining: UInt64)
        case chunked
        case closeDelimited
    }

    /// How long a lingering close reads and discards before closing (nginx's
    /// lingering_timeout is 5 s; the client has had the response by then).
    static let lingerTime = Duration.seconds(2)

    /// Set only by the events below (the extensions in `ConnectionMachine+*.swift`).
    var state: State

    init(openedAt now: LoopInstant) {
        state = .opened(at: now)
    }

    var isClosed: Bool { state == .closed }

    var isLingering: Bool {
        if case .lingering = state { return true }
        return false
    }

    /// Between requests: a head may grow the input buffer up to the header limit.
    var isAwaitingHead: Bool {
        switch state {
        case .opened, .idle, .readingHead: true
        case .handshaking, .exchange, .openingTunnel, .relaying, .closingAfterFlush, .lingering, .closed: false
        }
    }

    /// Whether to keep read interest: a full buffer is backpressure on the client, except
    /// for a head still arriving (the buffer may grow for it).
    func wantsInput(bufferFull: Bool) -> Bool {
        switch state {
        case .handshaking, .opened, .idle, .readingHead: true
        case .exchange: !bufferFull
        case .relaying(let relay): relay.toUpstream.isReading && !bufferFull
        // Bytes behind the CONNECT wait in the socket until the tunnel has started.
        case .openingTunnel, .closingAfterFlush, .lingering, .closed: false
        }
    }
}
