import LatchkeyHTTP
import LatchkeyLoop

/// One HTTP/1.1 request and its response over a raw upstream connection, as a value:
/// Latchkey writes the request (`RequestHeadEncoder`, the body as it comes, framed by its
/// length or with `ChunkedEncoder`) and reads the response (`ResponseDecoder`) itself, on a
/// connection libcurl opened (DNS, TLS with the route's settings, client certificate,
/// proxy) and handed over (`UpstreamConnection`), kept alive and pooled across exchanges.
/// This replaces libcurl's own per-transfer HTTP work, most of a small request's cost in
/// curl, for routes that need nothing else from it.
///
/// The glue feeds it the events — a connection is ready (reused from the pool or new), the
/// client's body bytes and end, the connection took bytes, bytes came, the connection
/// closed or failed, a timer fired, the delegate's answers — and does what each returns:
/// write the output, deliver a head or body slice, stop or resume reading, ask the client
/// for more body, send the request again on a new connection, finish (with whether the
/// connection may go back to the pool) or fail with an `UpstreamError`. No sockets, no
/// loop, no clock: time comes with the events.
///
/// The two directions move on their own, as with libcurl: the upstream may answer (even
/// completely) before the request body is written. An exchange ends exactly once: a
/// complete response (`.complete`), a failure (`.fail`), or `cancel()`.
///
/// Keep-alive (RFC 9112 §9.3): the connection goes back to the pool only when the request
/// was written whole, the response ended by its framing (not by the close), neither side
/// said `Connection: close`, the upstream spoke HTTP/1.1, and nothing followed the response.
///
/// A resend (RFC 9110 §9.2.2, as curl does for a reused connection): a connection from the
/// pool may have been closed by the upstream while it idled, the close crossing our request.
/// When such a connection fails (a write refused, the peer's close or a reset) before any
/// response byte, the request goes again once on a new connection, provided every byte
/// written is still held (`RequestOutput` keeps them up to its resend limit). nginx is
/// stricter and resends no POST once written; curl resends any request it can rewind, and
/// so does this, since the upstream read nothing of it but its close.
struct HTTP1ExchangeMachine {
    /// The connection the request is on.
    enum Link: Equatable {
        /// None yet: one is taken from the pool or made. Body bytes queue meanwhile.
        case awaiting
        /// Made for this exchange.
        case new
        /// Taken from the pool: a failure before any response byte allows a resend.
        case reused
    }

    /// The request body, as the client sends it.
    enum Upload: Equatable {
        /// The client may send more. `asked`: the output ran dry and the client was asked
        /// for more once; asked again only after its next bytes.
        case open(asked: Bool)
        /// The client's body ended; its end is queued (the last chunk for a chunked one).
        case ended
        /// A write failed after the response began: the rest of the request is dropped and
        /// the response read on. The connection cannot be reused.
        case abandoned
    }

    /// The response, as it arrives.
    enum Response: Equatable {
        /// No byte yet. `timed`: the request is written and the first-byte timer runs.
        case awaitingHead(timed: Bool)
        /// Bytes of a head came (interim heads included), not the final head yet.
        case readingHead
        /// The final head was delivered; the body follows. `paused`: the delegate asked for
        /// no more until `resumeReceiving` (backpressure), and the connection is not read.
        case streaming(paused: Bool)
    }

    private(set) var link = Link.awaiting
    private(set) var upload: Upload
    private(set) var response = Response.awaitingHead(timed: false)
    /// Completed, failed or cancelled: every event is ignored from then on.
    private(set) var isOver = false
    /// The request already went again after a reused connection failed.
    private(set) var resent = false

    let method: String
    private var output: RequestOutput
    private var decoder: ResponseDecoder
    /// Body bytes the client may still send (a sized body), or UInt64.max (chunked).
    private var bodyRemaining: UInt64
    private let chunked: Bool
    /// The request said `Connection: close`: the connection ends with the exchange.
    private let requestCloses: Bool
    /// The final head's verdict on keep-alive, once it came.
    private var responseKeepsAlive = false
    private var idle: IdleClock
    /// Request-body bytes taken from the client.
    private(set) var bytesSent: UInt64 = 0
    /// Response-body bytes delivered.
    private(set) var bytesReceived: UInt64 = 0

    /// Request-body bytes queued for a write, and written ones kept for a resend: the
    /// client is not read while they are at the high-water mark.
    var queuedBodyBytes: Int { output.held }

    /// Room for request bytes before the output grows.
    var outputCapacity: Int { output.capacity }

    /// - Parameters:
    ///   - head: the request head as written (`UpstreamRequest.encodedHead()`), its framing
    ///     field included.
    ///   - method: the request's; a response to HEAD has no body.
    ///   - body: how the request body is framed.
    ///   - requestCloses: the request's fields say `Connection: close`.
    init(head: [UInt8], method: String, body: UpstreamBody, requestCloses: Bool, idleTimeout: Duration, now: LoopInstant) {
        self.method = method
        self.requestCloses = requestCloses
        idle = IdleClock(timeout: idleTimeout, now: now)
        decoder = ResponseDecoder(requestMethod: method)
        var reserve = head.count
        switch body {
        case .none:
            bodyRemaining = 0
            chunked = false
            upload = .ended
        case .length(let length):
            bodyRemaining = length
            chunked = false
            upload = length == 0 ? .ended : .open(asked: false)
            reserve += Int(min(length, UInt64(UpstreamBody.highWater)))
        case .streaming:
            bodyRemaining = .max
            chunked = true
            upload = .open(asked: false)
            // Room for what a resend keeps, its chunk framing included: a queue that
            // doubled its way there copied a 64 KiB upload four times over.
            reserve += RequestOutput.resendLimit + Self.chunkFramingAllowance
        }
        output = RequestOutput(holding: head, reserving: reserve)
    }

    /// Chunk headers and terminators of a streamed body reserved for beside its bytes:
    /// enough for 64 KiB in chunks of 1 KiB or more.
    static let chunkFramingAllowance = 1024

    /// Neither over nor waiting for a connection: the connection is written and read.
    var isExchanging: Bool { !isOver && link != .awaiting }

    // MARK: the connection

    /// A connection is ready for the request: `reused` from the pool, or new. The glue
    /// writes the output next (`nextWrite`), and reads the connection.
    mutating func connected(reused: Bool) {
        guard !isOver, link == .awaiting else { return }
        // A resend goes on a new connection only: never resent twice.
        let reused = reused && !resent
        link = reused ? .reused : .new
        if !reused { output.forgetWritten() }
    }

    /// The connection failed: a write or read refused (a reset), or `error` on connecting.
    /// `whileWriting`: a write failed, and the response, if it began, is read on.
    mutating func connectionFailed(_ error: UpstreamError, whileWriting: Bool) -> LossStep {
        guard !isOver else { return .ignore }
        if whileWriting, response != .awaitingHead(timed: false), response != .awaitingHead(timed: true) {
            // The upstream answered and stopped reading (RFC 9112 §9.6 allows an early
            // answer, e.g. 413): its response decides, not the rest of our request.
            upload = .abandoned
            output.removeAll()
            return .readOn
        }
        if canResend { return resend() }
        return .fail(end(error))
    }

    /// A failure now sends the request again: a reused connection, no response byte, every
    /// written byte held.
    var canResend: Bool {
        guard link == .reused, output.keepsWritten else { return false }
        if case .awaitingHead = response { return true }
        return false
    }

    private mutating func resend() -> LossStep {
        resent = true
        link = .awaiting
        response = .awaitingHead(timed: false)
        output.rewind()
        decoder = ResponseDecoder(requestMethod: method)
        if case .open = upload { upload = .open(asked: false) }
        return .resend
    }

    /// The exchange ends with `error`.
    mutating func end(_ error: UpstreamError) -> UpstreamError {
        conclude()
        return error
    }

    /// The exchange ends, whichever way: the request bytes still held go, for no
    /// connection takes them now (an answer may come before the body is written).
    private mutating func conclude() {
        isOver = true
        output.removeAll()
    }

    /// The client went away. Returns false when the exchange is over already.
    mutating func cancel() -> Bool {
        guard !isOver else { return false }
        conclude()
        return true
    }
}

/// The first-byte and idle timers, armed and fired by the glue, decided here.
extension HTTP1ExchangeMachine {
    /// The first-byte timer fired. Returns the error to fail with, or nil when a byte came
    /// meanwhile (or the exchange is over).
    mutating func firstByteTimerFired() -> UpstreamError? {
        guard !isOver, response == .awaitingHead(timed: true) else { return nil }
        return end(UpstreamError(.firstByteTimeout, detail: "no response within the first-byte timeout"))
    }

    /// The idle timer fired at `now`.
    mutating func idleTimerFired(now: LoopInstant) -> IdleStep {
        guard isExchanging else { return isOver ? .ignore : .rearm(at: now.advanced(by: idle.timeout)) }
        // Not counted while we hold the exchange: waiting for the client's body or for the
        // delegate to drain, or while the first-byte timeout is the one that applies.
        let waitingOnClient = upload == .open(asked: true)
        let waitingOnUs = waitingOnClient || response == .streaming(paused: true) || response == .awaitingHead(timed: true)
        if let deadline = idle.nextDeadline(firedAt: now, heldByUs: waitingOnUs) { return .rearm(at: deadline) }
        return .fail(end(IdleClock.expired))
    }
}


/// The request: the client's body in, framed; the output to the connection.
extension HTTP1ExchangeMachine {
    /// The client's body bytes (copied into the output, framed). Returns true when the glue
    /// must write: a connection is there and nothing was waiting to be written. Ignored once
    /// the body ended or the exchange is over; a sized body takes no more than its length
    /// (RFC 9112 §6.2: what a client sends on is not part of it).
    mutating func bodyAvailable(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !isOver, case .open = upload, bytes.count > 0, bodyRemaining > 0 else { return false }
        let wasDry = output.unwritten == 0
        let taken = UInt64(bytes.count) < bodyRemaining ? bytes : UnsafeRawBufferPointer(rebasing: bytes[..<Int(bodyRemaining)])
        if chunked {
            var header: [UInt8] = []
            ChunkedEncoder.appendChunkHeader(size: taken.count, into: &header)
            output.append(header)
            output.append(taken)
            output.append(ChunkedEncoder.chunkTerminator)
        } else {
            output.append(taken)
            bodyRemaining -= UInt64(taken.count)
        }
        bytesSent &+= UInt64(taken.count)
        upload = bodyRemaining == 0 ? .ended : .open(asked: false)
        return wasDry && isExchanging
    }

    /// The client's body ended. Returns what the glue does: write the last chunk, or fail a
    /// sized body that ended short of its length (the upstream would wait for the rest).
    mutating func bodyEnded() -> BodyEndStep {
        guard !isOver, case .open = upload else { return .none }
        if !chunked {
            return .fail(end(UpstreamError(.sendFailed, detail: "the request body ended before its Content-Length")))
        }
        let wasDry = output.unwritten == 0
        output.append(ChunkedEncoder.lastChunk)
        upload = .ended
        return wasDry && isExchanging ? .write : .none
    }

    /// What the glue does next on the write side.
    mutating func nextWrite() -> WriteStep {
        guard isExchanging else { return .none }
        if output.unwritten > 0 { return .write }
        switch upload {
        case .open(asked: false):
            upload = .open(asked: true)
            return .waitForBody(askClient: true)
        case .open(asked: true):
            return .waitForBody(askClient: false)
        case .abandoned:
            return .none
        case .ended:
            // Written whole: the first-byte timer starts, unless a response byte came first.
            guard response == .awaitingHead(timed: false) else { return .none }
            response = .awaitingHead(timed: true)
            return .requestWritten
        }
    }

    /// Offers the next bytes to write, as far as they lie contiguous, to `send` (send(2)),
    /// which returns how many the connection took (nil or 0: none for now), and counts those
    /// as written. One mutating call rather than a look and a report: a transfer holding
    /// the machine lends it in place for a mutating call, where a non-mutating one that runs
    /// a closure copies the whole machine first.
    mutating func sendUnwritten<E: Error>(
        now: LoopInstant, _ send: (UnsafeRawBufferPointer) throws(E) -> Int?
    ) throws(E) -> Int? {
        let sent = try output.withUnwritten(send)
        if let sent, sent > 0, isExchanging {
            output.wrote(sent)
            idle.activity(at: now)
        }
        return sent
    }

    /// The request is written whole (nothing of it left to send).
    var requestWritten: Bool { upload == .ended && output.unwritten == 0 }
}


/// The response: the connection's bytes in, the delegate's head and body out.
extension HTTP1ExchangeMachine {
    /// Decodes `input`, every byte read and not yet consumed, up to its next event; the
    /// contract is `ResponseDecoder`'s: drop `consumed` bytes, and call again after any
    /// event but `.needMore`, `.paused`, `.complete` and `.fail`. Interim (1xx) heads are
    /// skipped here (RFC 9110 §15.2: a proxy need not forward them).
    mutating func received(_ input: UnsafeRawBufferPointer, now: LoopInstant) -> DecodeStep<ReceiveEvent> {
        guard isExchanging else { return DecodeStep(consumed: 0, event: .needMore) }
        if response == .streaming(paused: true) { return DecodeStep(consumed: 0, event: .paused) }
        if !input.isEmpty {
            idle.activity(at: now)
            if case .awaitingHead = response {
                // The upstream answers: no resend from now on.
                response = .readingHead
                output.forgetWritten()
            }
        }
        var consumed = 0
        while true {
            let rest = UnsafeRawBufferPointer(rebasing: input[consumed...])
            let step = decoder.decode(rest)
            consumed += step.consumed
            switch step.event {
            case .needMore:
                return DecodeStep(consumed: consumed, event: .needMore)
            case .head(let head) where head.status == 101:
                return DecodeStep(consumed: consumed, event: .fail(end(UpstreamError(
                    .other, detail: "the upstream switched protocols unasked"))))
            case .head(let head) where head.status < 200:
                continue
            case .head(let head):
                response = .streaming(paused: false)
                // RFC 9112 §9.3: HTTP/1.1 persists unless `close`; an HTTP/1.0 answer is
                // not kept (its keep-alive extension is not worth the guesswork).
                responseKeepsAlive = head.version == .http1_1 && !head.fields.connectionLists("close")
                    && head.framing != .closeDelimited
                return DecodeStep(consumed: consumed, event: .head(status: head.status, fields: head.fields, declared: head.declared))
            case .body(let range):
                bytesReceived &+= UInt64(range.count)
                let shifted = (range.lowerBound + consumed - step.consumed)..<(range.upperBound + consumed - step.consumed)
                return DecodeStep(consumed: consumed, event: .body(shifted))
            case .end:
                // Bytes after the response's end are none the next exchange could read.
                let reusable = consumed == input.count && keepsConnection
                conclude()
                return DecodeStep(consumed: consumed, event: .complete(reusable: reusable))
            case .switched:
                return DecodeStep(consumed: consumed, event: .fail(end(UpstreamError(
                    .other, detail: "the upstream switched protocols unasked"))))
            case .error(let error):
                // A broken answer, not a broken connection: `.other` (502 bad_gateway), as
                // libcurl's CURLE_WEIRD_SERVER_REPLY is.
                return DecodeStep(consumed: consumed, event: .fail(end(UpstreamError(
                    .other, detail: "the upstream's response: \(error)"))))
            }
        }
    }

    /// The connection can carry the next exchange once this response ended by its framing.
    private var keepsConnection: Bool {
        responseKeepsAlive && !requestCloses && requestWritten
    }

    /// The delegate took body bytes and wants `more`, or none until `resumeReceiving`.
    /// Returns true when the glue stops reading the connection.
    mutating func delivered(more: Bool) -> Bool {
        guard !more, isExchanging, response == .streaming(paused: false) else { return false }
        response = .streaming(paused: true)
        return true
    }

    /// The delegate lifts its backpressure pause. Returns true when the glue decodes what
    /// it holds and reads the connection again.
    mutating func resumeReceiving(now: LoopInstant) -> Bool {
        guard isExchanging, response == .streaming(paused: true) else { return false }
        response = .streaming(paused: false)
        idle.activity(at: now)
        return true
    }

    /// The upstream closed the connection (a read returned 0), every byte before the close
    /// decoded: the end of a close-delimited body; else a cut response, or a reused
    /// connection that the upstream had closed, when nothing came.
    mutating func peerClosed() -> LossStep {
        guard isExchanging else { return .ignore }
        if canResend {
            return connectionFailed(UpstreamError(.receiveFailed, detail: "the upstream closed the connection"), whileWriting: false)
        }
        switch decoder.finish() {
        case .end:
            conclude()
            return .complete
        case .error(let error):
            let detail = response == .awaitingHead(timed: true) || response == .awaitingHead(timed: false)
                ? "the upstream closed the connection without answering" : "the upstream's response was cut: \(error)"
            return .fail(end(UpstreamError(.receiveFailed, detail: detail)))
        case .needMore, .head, .body, .switched:
            return .fail(end(UpstreamError(.receiveFailed, detail: "the upstream closed the connection")))
        }
    }
}
