/// Decodes one HTTP/1.1 response from a byte stream: push-based, incremental, no I/O; the
/// response side of `RequestDecoder`, for exchanges Latchkey frames itself over a raw
/// upstream connection (an Upgrade handshake now).
///
/// The contract of `decode(_:)` is `RequestDecoder`'s: pass everything received and not yet
/// consumed, drop `consumed` bytes, call again after any event but `.needMore` and
/// `.error`. At the end of the stream call `finish()`: a close-delimited body ends there,
/// any other framing was cut short.
///
/// - Interim responses (1xx but 101) are reported as `.head` and the decoder expects the
///   final one next (RFC 9110 §15.2). A `101 Switching Protocols` ends the decoding: what
///   follows it belongs to the new protocol, and the decoder only reports `.switched`.
/// - Framing (RFC 9112 §6.3): none for a response to HEAD, 204 and 304; chunked when the
///   final transfer coding is chunked, close-delimited for another coding; else the
///   Content-Length, which must be valid (digits, equal values) — anything else is an
///   error, never a guess; else close-delimited.
/// - A response head is held to `HTTPLimits` as a request head is.
public struct ResponseDecoder: Sendable {
    public enum Event: Sendable, Equatable {
        case needMore
        case head(ResponseHead)
        /// Body bytes: `input[range]` of the input just passed.
        case body(Range<Int>)
        case end
        /// After a `101` head: the rest of the stream is the new protocol's.
        case switched
        case error(HTTPParseError)
    }

    public typealias Step = DecodeStep<Event>

    enum State: Sendable {
        case head(FieldSectionScanner)
        case endPending
        case fixedLength(remaining: UInt64)
        case chunked(ChunkedBodyDecoder)
        case closeDelimited
        case switched
        case ended
        case failed(HTTPParseError)
    }

    public let limits: HTTPLimits
    /// The response to a HEAD request has no body, whatever its head says.
    let requestMethod: String
    var state = State.head(Self.headScanner)
    /// The trailer fields of a chunked response, after its `.end`.
    public private(set) var trailers = HTTPFields()

    public init(limits: HTTPLimits = .init(), requestMethod: String) {
        self.limits = limits
        self.requestMethod = requestMethod
    }

    public mutating func decode(_ input: UnsafeRawBufferPointer) -> Step {
        switch state {
        case .failed(let error):
            return Step(consumed: 0, event: .error(error))
        case .switched:
            return Step(consumed: 0, event: .switched)
        case .ended:
            return Step(consumed: 0, event: .needMore)
        case .head(var scanner):
            return decodeHead(input, &scanner)
        case .endPending:
            state = .ended
            return Step(consumed: 0, event: .end)
        case .fixedLength(let remaining):
            guard !input.isEmpty else { return Step(consumed: 0, event: .needMore) }
            let count = Int(min(remaining, UInt64(input.count)))
            state = remaining == UInt64(count) ? .endPending : .fixedLength(remaining: remaining - UInt64(count))
            return Step(consumed: count, event: .body(0..<count))
        case .closeDelimited:
            guard !input.isEmpty else { return Step(consumed: 0, event: .needMore) }
            return Step(consumed: input.count, event: .body(0..<input.count))
        case .chunked(var chunked):
            let step = chunked.decode(input, limits: limits, trailers: &trailers)
            switch step.event {
            case .needMore:
                state = .chunked(chunked)
                return Step(consumed: step.consumed, event: .needMore)
            case .body(let range):
                state = .chunked(chunked)
                return Step(consumed: step.consumed, event: .body(range))
            case .end:
                state = .ended
                return Step(consumed: step.consumed, event: .end)
            case .error(let error):
                state = .failed(error)
                return Step(consumed: step.consumed, event: .error(error))
            case .head:
                preconditionFailure("a chunked body has no head")
            }
        }
    }

    /// The stream ended: the end of a close-delimited body, a cut anywhere else.
    public mutating func finish() -> Event {
        switch state {
        case .closeDelimited, .ended, .endPending:
            state = .ended
            return .end
        case .switched:
            return .switched
        case .failed(let error):
            return .error(error)
        case .head, .fixedLength, .chunked:
            let error = HTTPParseError(.truncatedResponse)
            state = .failed(error)
            return .error(error)
        }
    }

    /// A response head's lines may end in a bare LF (RFC 9112 §2.2), as nginx and libcurl
    /// read them; a request's may not.
    private static var headScanner: FieldSectionScanner {
        FieldSectionScanner(expectingRequestLine: true, acceptingBareLF: true)
    }

    private mutating func decodeHead(_ input: UnsafeRawBufferPointer, _ scanner: inout FieldSectionScanner) -> Step {
        switch scanner.scan(input, limits: limits) {
        case .needMore:
            let skipped = scanner.skippedBytes
            scanner.dropSkippedBytes()
            state = .head(scanner)
            return Step(consumed: skipped, event: .needMore)
        case .failure(let code):
            return fail(HTTPParseError(code))
        case .complete(let end):
            let head: ResponseHead
            do {
                head = try Self.parseHead(input, statusLine: scanner.statusLine, fields: scanner.fieldLines,
                                          requestMethod: requestMethod)
            } catch {
                return fail(error)
            }
            switch head.framing {
            case _ where head.status == 101: state = .switched
            case _ where head.status < 200: state = .head(Self.headScanner)
            case .none, .length(0): state = .endPending
            case .length(let length): state = .fixedLength(remaining: length)
            case .chunked: state = .chunked(ChunkedBodyDecoder(.response))
            case .closeDelimited: state = .closeDelimited
            }
            return Step(consumed: end, event: .head(head))
        }
    }

    private mutating func fail(_ error: HTTPParseError) -> Step {
        state = .failed(error)
        return Step(consumed: 0, event: .error(error))
    }

    static func parseHead(_ bytes: UnsafeRawBufferPointer, statusLine: Range<Int>, fields region: Range<Int>,
                          requestMethod: String) throws(HTTPParseError) -> ResponseHead {
        guard case .status(let version, let status)? = HTTPResponseLine.parse(UnsafeRawBufferPointer(rebasing: bytes[statusLine])),
              version.major == 1 else {
            // A bare CR, which the scanner leaves to the parsers, is named as such.
            throw HTTPParseError(bytes[statusLine].contains(ASCII.cr) ? .invalidLineEnding : .badStatusLine)
        }
        let fields = try HTTPFields(parsing: bytes, region, fieldCount: 16, .response)
        let declared = DeclaredFraming(fields)
        return ResponseHead(status: status, version: version, fields: fields, declared: declared,
                            framing: try ResponseHead.framing(status: status, fields: fields, declared: declared,
                                                              requestMethod: requestMethod))
    }
}

/// A response's status line and fields, and how its body is delimited.
public struct ResponseHead: Sendable, Equatable {
    public var status: Int
    public var version: HTTPVersion
    public var fields: HTTPFields
    /// What the fields say of the framing, read once for whoever handles the head next.
    public var declared: DeclaredFraming
    public var framing: Framing

    public enum Framing: Sendable, Equatable {
        case none
        case length(UInt64)
        case chunked
        /// Until the connection closes.
        case closeDelimited
    }

    public init(status: Int, version: HTTPVersion = .http1_1, fields: HTTPFields, declared: DeclaredFraming, framing: Framing) {
        self.status = status
        self.version = version
        self.fields = fields
        self.declared = declared
        self.framing = framing
    }

    /// RFC 9112 §6.3, for a response.
    static func framing(status: Int, fields: HTTPFields, declared: DeclaredFraming,
                        requestMethod: String) throws(HTTPParseError) -> Framing {
        if requestMethod.hasBytes("HEAD") || status < 200 || status == 204 || status == 304 { return .none }
        switch declared {
        case .transferEncoded:
            let codings = fields.values(named: .transferEncoding)
            // Rule 3: Transfer-Encoding overrides Content-Length; a final coding other than
            // chunked is read to the close. The lines make one list, whose empty elements
            // (a line of its own included) do not count (RFC 9110 §5.6.1).
            let last = codings.lazy.flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces() }.last { !$0.isEmpty }
            return last?.lowercased() == "chunked" ? .chunked : .closeDelimited
        case .length(let length, _): return .length(length)
        case .undeclared: return .closeDelimited
        case .invalid(let error): throw error
        }
    }
}
