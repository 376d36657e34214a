import LatchkeyHTTP
import LatchkeyLoop

/// The request side: bytes arriving, heads and bodies decoded, the handler pausing and
/// resuming the body, and the server refusing a request on its own.
extension ConnectionMachine {
    /// What the buffered input should be decoded as, if anything.
    enum DecodeStep {
        case head
        case body
        case none
    }

    enum HeadAction: Equatable {
        /// Hand the exchange to the handler; the body follows.
        case deliver
        /// Hand it over and end its (empty) body at once.
        case deliverWithoutBody
        /// Refuse it: the server answers with this document and closes after it.
        case reject(ErrorDocument)
    }

    enum BodyFlow: Equatable {
        case unchanged
        case paused
        /// Reading again; `sendContinue`: the client waits for `100 Continue` first.
        case resumed(sendContinue: Bool)
    }

    var decodeStep: DecodeStep {
        switch state {
        case .opened, .idle, .readingHead: .head
        case .exchange(let exchange):
            if case .reading = exchange.request { .body } else { .none }
        case .handshaking, .openingTunnel, .relaying, .closingAfterFlush, .lingering, .closed: .none
        }
    }

    /// Bytes were read; between requests they start the head clock.
    mutating func bytesArrived(at now: LoopInstant) {
        switch state {
        case .opened(let openedAt): state = .readingHead(since: openedAt)
        case .idle: state = .readingHead(since: now)
        case .handshaking, .readingHead, .exchange, .openingTunnel, .relaying, .closingAfterFlush, .lingering, .closed: break
        }
    }

    /// The decoder needs more for the head. `bufferEmpty`: it consumed everything (a stray
    /// CRLF between requests, RFC 9112 §2.2), so no head is under way and its clock must not
    /// time the next one.
    mutating func headIncomplete(bufferEmpty: Bool) {
        guard bufferEmpty, case .readingHead = state else { return }
        state = .idle
    }

    /// A head was decoded. `keepAlive`: the client allows it and the server is not
    /// shutting down.
    mutating func headDecoded(_ head: RequestHead, at now: LoopInstant, keepAlive: Bool, settings: ConnectionSettings) -> HeadAction {
        let hasBody = head.framing != .none
        let request: RequestBody
        if !hasBody {
            request = .complete
        } else if head.expectsContinue && head.version == .http1_1 {
            request = .awaitingContinue(budget: settings.bodyTimeout)
        } else {
            request = .reading(deadline: now.advanced(by: settings.bodyTimeout))
        }
        state = .exchange(Exchange(request: request, response: .waiting, keepAlive: keepAlive))
        if let limit = settings.maxRequestBodyBytes, case .length(let length) = head.framing, length > limit {
            serverAnswers()
            return .reject(Self.bodyTooLarge(limit))
        }
        return hasBody ? .deliver : .deliverWithoutBody
    }

    /// The document for a body over `limit` bytes, or nil while `total` is within it.
    func bodyOverLimit(total: UInt64, settings: ConnectionSettings) -> ErrorDocument? {
        guard let limit = settings.maxRequestBodyBytes, total > limit else { return nil }
        return Self.bodyTooLarge(limit)
    }

    mutating func bodyEnded() {
        updateExchange { $0.request = .complete }
    }

    /// The body turned out malformed, too large or too slow: answer it if nothing of the
    /// response went out yet, else cut the response.
    var bodyFailureIsAnswerable: Bool {
        guard case .exchange(let exchange) = state else { return false }
        return exchange.response == .waiting
    }

    /// The handler pauses (`paused`) or resumes the body.
    mutating func setBodyPaused(_ paused: Bool, at now: LoopInstant) -> BodyFlow {
        guard case .exchange(var exchange) = state else { return .unchanged }
        let flow: BodyFlow
        switch (exchange.request, paused) {
        case (.awaitingContinue(let budget), false):
            exchange.request = .reading(deadline: now.advanced(by: budget))
            flow = .resumed(sendContinue: true)
        case (.paused(let budget), false):
            exchange.request = .reading(deadline: now.advanced(by: budget))
            flow = .resumed(sendContinue: false)
        case (.reading(let deadline), true):
            exchange.request = .paused(budget: deadline.since(now))
            flow = .paused
        case (.awaitingContinue, true), (.paused, true), (.reading, false), (.complete, _):
            return .unchanged
        }
        state = .exchange(exchange)
        return flow
    }

    /// The server answers a request itself (malformed, too large, too slow, over the
    /// limits) and closes after it: the rest of the byte stream cannot be trusted to frame
    /// another request.
    mutating func serverAnswers() {
        if case .exchange(var exchange) = state {
            exchange.request = .complete
            exchange.keepAlive = false
            state = .exchange(exchange)
        } else {
            state = .exchange(Exchange(request: .complete, response: .waiting, keepAlive: false))
        }
    }

    mutating func updateExchange(_ change: (inout Exchange) -> Void) {
        guard case .exchange(var exchange) = state else { return }
        change(&exchange)
        state = .exchange(exchange)
    }

    static func bodyTooLarge(_ limit: UInt64) -> ErrorDocument {
        ErrorDocument(status: 413, error: "payload_too_large", message: "request body is larger than the \(limit)-byte limit")
    }
}
