/// Decodes HTTP/1.1 requests from a byte stream: push-based, incremental, no I/O.
///
/// Contract of `decode(_:)`: pass everything received and not yet consumed, oldest first.
/// The step says how many bytes from the front were used (`consumed`, always ≤ the input's
/// count); drop them, keep the rest, and call again with the rest followed by whatever
/// arrives next. Call again right away after any event but `.needMore` (which wants more
/// bytes) and `.error` (final): several events may be waiting in the bytes you have, and
/// `.end` may come with no bytes at all.
///
/// - The head is decoded only once all of it (through the empty line) is present. Until
///   then `.needMore` consumes nothing, except empty lines before the request line (RFC
///   9112 §2.2), which are consumed as soon as seen. Limits are checked on the bytes
///   present, so a client that never finishes its head is refused once it sends more
///   than `HTTPLimits` allow; the buffer never needs to grow beyond them.
/// - Body bytes are reported as soon as any are present, as `.body(range)` indexing the
///   input just passed (no copy); the range is part of `consumed`, so copy or forward them
///   before dropping. Chunk-size lines and the CRLF after chunk data are consumed as they
///   arrive, so in a chunked body `.needMore` may consume bytes.
/// - A request without a body gives `.head` then `.end` (with `consumed == 0`). After
///   `.end` the decoder expects the next request: pipelined requests are decoded in order.
/// - After `.error` every call returns the same error: answer with `error.status` and close
///   the connection (RFC 9112 §11.2).
/// - The decoder knows nothing of tunnels: after a request that turns the connection into
///   one (a 2xx to CONNECT, a 101 to `Upgrade`), stop feeding it.
public struct RequestDecoder: Sendable {
    public enum Event: Sendable, Equatable {
        /// Nothing more can be decoded from these bytes.
        case needMore
        case head(RequestHead)
        /// Body bytes: `input[range]` of the input just passed.
        case body(Range<Int>)
        /// The request is complete; the decoder is ready for the next one.
        case end
        case error(HTTPParseError)
    }

    public typealias Step = DecodeStep<Event>

    enum State: Sendable {
        case head(FieldSectionScanner)
        /// The head had no body (or `Content-Length: 0`): `.end` is next.
        case endPending
        case fixedLength(remaining: UInt64)
        case chunked(ChunkedBodyDecoder)
        case failed(HTTPParseError)
    }

    public let limits: HTTPLimits
    var state: State

    /// The trailer fields of the last chunked request, available after its `.end` until the
    /// next head (RFC 9110 §6.5). Parsed with the same rules as header fields; a proxy may
    /// forward or drop them, they are never merged into the head.
    public internal(set) var trailers = HTTPFields()

    public init(limits: HTTPLimits = .init()) {
        self.limits = limits
        state = .head(FieldSectionScanner(expectingRequestLine: true))
    }

    /// Whether the decoder is between requests: no head decoded whose `.end` is still to
    /// come. (Bytes of the next head may already sit unconsumed in the caller's buffer.)
    public var isAwaitingHead: Bool {
        if case .head = state { true } else { false }
    }

    /// Whether the decoder has failed; `decode` will only repeat the error.
    public var hasFailed: Bool {
        if case .failed = state { true } else { false }
    }

    public mutating func decode(_ input: UnsafeRawBufferPointer) -> Step {
        let step: Step
        switch state {
        case .failed(let error):
            return Step(consumed: 0, event: .error(error))
        case .head(var scanner):
            step = decodeHead(input, &scanner)
        case .endPending:
            state = .head(FieldSectionScanner(expectingRequestLine: true))
            return Step(consumed: 0, event: .end)
        case .fixedLength(let remaining):
            guard !input.isEmpty else { return Step(consumed: 0, event: .needMore) }
            let count = Int(min(remaining, UInt64(input.count)))
            state = remaining == UInt64(count) ? .endPending : .fixedLength(remaining: remaining - UInt64(count))
            return Step(consumed: count, event: .body(0..<count))
        case .chunked(var chunked):
            step = chunked.decode(input, limits: limits, trailers: &trailers)
            switch step.event {
            case .end: state = .head(FieldSectionScanner(expectingRequestLine: true))
            case .error: break
            default: state = .chunked(chunked)
            }
        }
        if case .error(let error) = step.event { state = .failed(error) }
        return step
    }
}
