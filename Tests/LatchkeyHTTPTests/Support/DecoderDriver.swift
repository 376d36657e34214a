import LatchkeyHTTP
import Testing

/// Feeds a `RequestDecoder` the way a connection does: bytes arrive in pieces, unconsumed
/// bytes stay in a buffer, and the decoder is called until it needs more. The transcript
/// merges adjacent body events, so any two splits of the same bytes must give equal
/// transcripts (the point of STYLE.md habit 2).
struct DecoderDriver {
    struct Transcript: Equatable, CustomStringConvertible {
        enum Item: Equatable {
            case head(RequestHead)
            case body([UInt8])
            case end(trailers: HTTPFields)
            case error(HTTPParseError)
        }

        var items: [Item] = []
        /// Bytes received and never consumed (nil after an error).
        var leftover: Int? = 0

        mutating func append(_ item: Item) {
            if case .body(let more) = item, case .body(let bytes)? = items.last {
                items[items.count - 1] = .body(bytes + more)
            } else {
                items.append(item)
            }
        }

        var error: HTTPParseError? {
            if case .error(let error)? = items.last { error } else { nil }
        }

        /// The requests seen, each with its body and whether its `.end` came.
        var requests: [DecodedRequest] {
            var requests: [DecodedRequest] = []
            for item in items {
                switch item {
                case .head(let head): requests.append(DecodedRequest(head: head))
                case .body(let bytes): requests[requests.count - 1].body += bytes
                case .end(let trailers):
                    requests[requests.count - 1].complete = true
                    requests[requests.count - 1].trailers = trailers
                case .error: break
                }
            }
            return requests
        }

        var description: String {
            items.map { item in
                switch item {
                case .head(let head): "head(\(head.method) \(head.target) \(head.framing))"
                case .body(let bytes): "body(\(bytes.count) bytes)"
                case .end: "end"
                case .error(let error): "error(\(error.code))"
                }
            }.joined(separator: ", ") + " leftover \(leftover.map(String.init) ?? "-")"
        }
    }

    struct DecodedRequest: Equatable {
        var head: RequestHead
        var body: [UInt8] = []
        var complete = false
        var trailers: HTTPFields = []
    }

    /// Decodes `wire` delivered in pieces that end at each of `cuts` (ascending offsets).
    static func run(_ wire: [UInt8], cuts: [Int], limits: HTTPLimits = .init()) -> Transcript {
        var decoder = RequestDecoder(limits: limits)
        var transcript = Transcript()
        var pending: [UInt8] = []
        var delivered = 0
        for cut in cuts + [wire.count] where cut >= delivered {
            pending += wire[delivered..<cut]
            delivered = cut
            var idleSteps = 0
            while true {
                let step = pending.withUnsafeBytes { decoder.decode($0) }
                #expect(step.consumed >= 0 && step.consumed <= pending.count)
                switch step.event {
                case .needMore:
                    break
                case .head(let head):
                    transcript.append(.head(head))
                case .body(let range):
                    #expect(range.lowerBound >= 0 && range.upperBound <= step.consumed && !range.isEmpty)
                    transcript.append(.body(Array(pending[range])))
                case .end:
                    transcript.append(.end(trailers: decoder.trailers))
                case .error(let error):
                    transcript.append(.error(error))
                    transcript.leftover = nil
                    // An error is final: repeated, nothing consumed.
                    let again = pending.withUnsafeBytes { decoder.decode($0) }
                    #expect(again == RequestDecoder.Step(consumed: 0, event: .error(error)))
                    return transcript
                }
                pending.removeFirst(step.consumed)
                if case .needMore = step.event { break }
                idleSteps = step.consumed == 0 ? idleSteps + 1 : 0
                guard idleSteps < 3 else {
                    Issue.record("decoder makes no progress")
                    return transcript
                }
            }
        }
        transcript.leftover = pending.count
        return transcript
    }

    static func whole(_ wire: [UInt8], limits: HTTPLimits = .init()) -> Transcript {
        run(wire, cuts: [], limits: limits)
    }

    static func byteByByte(_ wire: [UInt8], limits: HTTPLimits = .init()) -> Transcript {
        run(wire, cuts: Array(wire.indices.dropFirst()), limits: limits)
    }
}

extension Array where Element == UInt8 {
    /// Wire bytes from a string literal: `"GET / HTTP/1.1\r\n…"`.
    init(wire: String) {
        self = Array(wire.utf8)
    }
}
