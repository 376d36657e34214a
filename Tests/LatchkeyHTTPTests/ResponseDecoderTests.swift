import LatchkeyHTTP
import Testing

/// The response decoder, from one table of labelled wires (hostile ones included), each
/// decoded whole, split at every offset and byte by byte, with the same transcript.
struct ResponseDecoderTests {
    enum Item: Equatable {
        case head(status: Int, framing: ResponseHead.Framing)
        case body([UInt8])
        case end
        case switched
        case error(HTTPParseError.Code)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let label: String
        let wire: String
        var method = "GET"
        let expected: [Item]
        /// What stays unconsumed after the decoding (the new protocol's bytes after a 101).
        var leftover = 0
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "length", wire: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
             expected: [.head(status: 200, framing: .length(5)), .body(Array("hello".utf8)), .end]),
        Case(label: "empty length", wire: "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n",
             expected: [.head(status: 401, framing: .length(0)), .end]),
        Case(label: "chunked with trailer", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: v\r\n\r\n",
             expected: [.head(status: 200, framing: .chunked), .body(Array("abcde".utf8)), .end]),
        Case(label: "chunked wins over Content-Length", wire: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
             expected: [.head(status: 200, framing: .chunked), .body(Array("x".utf8)), .end]),
        // RFC 9110 §5.6.1: empty list elements are ignored, so chunked is still the final coding.
        Case(label: "chunked before an empty list element", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, \r\n\r\n1\r\nx\r\n0\r\n\r\n",
             expected: [.head(status: 200, framing: .chunked), .body(Array("x".utf8)), .end]),
        Case(label: "chunked before an empty Transfer-Encoding line",
             wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nTransfer-Encoding: ,\r\n\r\n1\r\nx\r\n0\r\n\r\n",
             expected: [.head(status: 200, framing: .chunked), .body(Array("x".utf8)), .end]),
        Case(label: "close-delimited", wire: "HTTP/1.1 200 OK\r\n\r\nto the end",
             expected: [.head(status: 200, framing: .closeDelimited), .body(Array("to the end".utf8)), .end]),
        Case(label: "another coding is read to the close", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzz",
             expected: [.head(status: 200, framing: .closeDelimited), .body(Array("zz".utf8)), .end]),
        Case(label: "HEAD has no body", wire: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", method: "HEAD",
             expected: [.head(status: 200, framing: .none), .end]),
        Case(label: "204 and 304 have none", wire: "HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n",
             expected: [.head(status: 204, framing: .none), .end]),
        Case(label: "interim then final", wire: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz",
             expected: [.head(status: 100, framing: .none), .head(status: 103, framing: .none), .head(status: 200, framing: .length(1)),
                        .body(Array("z".utf8)), .end]),
        Case(label: "101 switches, the rest is the new protocol's",
             wire: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\u{81}\u{02}hi",
             expected: [.head(status: 101, framing: .none), .switched], leftover: 5),
        Case(label: "HTTP/1.0", wire: "HTTP/1.0 200 OK\r\n\r\nold", expected: [.head(status: 200, framing: .closeDelimited), .body(Array("old".utf8)), .end]),
        // Hostile or broken.
        Case(label: "not a status line", wire: "HTTZ/1.1 200 OK\r\n\r\n", expected: [.error(.badStatusLine)]),
        Case(label: "HTTP/2 in an HTTP/1 stream", wire: "HTTP/2 200\r\n\r\n", expected: [.error(.badStatusLine)]),
        Case(label: "conflicting lengths", wire: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
             expected: [.error(.conflictingContentLength)]),
        Case(label: "a non-numeric length", wire: "HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello", expected: [.error(.invalidContentLength)]),
        Case(label: "NUL in a field", wire: "HTTP/1.1 200 OK\r\nX: a\u{0}b\r\n\r\n", expected: [.error(.invalidFieldValue)]),
        Case(label: "obs-fold", wire: "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", expected: [.error(.obsFold)]),
        // RFC 9112 §2.2: a recipient may take a bare LF as a line's end; nginx and libcurl do.
        Case(label: "a bare LF", wire: "HTTP/1.1 200 OK\nX: a\r\n\r\n", expected: [.head(status: 200, framing: .closeDelimited), .end]),
        Case(label: "bare LFs throughout", wire: "HTTP/1.1 200 OK\nContent-Length: 2\nX: a\n\nok",
             expected: [.head(status: 200, framing: .length(2)), .body(Array("ok".utf8)), .end]),
        Case(label: "CRLF and bare LF mixed", wire: "HTTP/1.1 200 OK\r\nX: a\nContent-Length: 2\r\n\nok",
             expected: [.head(status: 200, framing: .length(2)), .body(Array("ok".utf8)), .end]),
        Case(label: "a head without fields ended by bare LFs", wire: "HTTP/1.1 204 No Content\n\n",
             expected: [.head(status: 204, framing: .none), .end]),
        Case(label: "a bare CR before a bare LF", wire: "HTTP/1.1 200 OK\nX: a\r\r\n\n", expected: [.error(.invalidLineEnding)]),
        Case(label: "a bare CR in the status line", wire: "HTTP/1.1 200\rOK\r\nX: a\r\n\r\n", expected: [.error(.invalidLineEnding)]),
        Case(label: "a bare CR in a value", wire: "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", expected: [.error(.invalidLineEnding)]),
        Case(label: "a bad chunk size", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
             expected: [.head(status: 200, framing: .chunked), .error(.badChunkSize)]),
        // A response's chunk framing may end its lines in a bare LF too, as nginx and libcurl
        // read it; a request's may not (RequestDecoderCases).
        Case(label: "chunk framing ended by bare LFs",
             wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\n3;x=y\nabc\n0\nT: v\n\n",
             expected: [.head(status: 200, framing: .chunked), .body(Array("okabc".utf8)), .end]),
        Case(label: "chunk framing with CRLF and bare LF mixed",
             wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\n1\nx\r\n0\r\n\n",
             expected: [.head(status: 200, framing: .chunked), .body(Array("okx".utf8)), .end]),
        Case(label: "a bare CR after chunk data", wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\rX",
             expected: [.head(status: 200, framing: .chunked), .body(Array("ok".utf8)), .error(.badChunkFraming)]),
        Case(label: "whitespace after a chunk size ended by a bare LF",
             wire: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 \nok\n0\n\n",
             expected: [.head(status: 200, framing: .chunked), .error(.badChunkSize)]),
        Case(label: "cut short", wire: "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhalf",
             expected: [.head(status: 200, framing: .length(9)), .body(Array("half".utf8)), .error(.truncatedResponse)]),
    ]

    /// Decodes `wire` delivered in pieces ending at `cuts`, then the end of the stream.
    static func transcript(_ test: Case, cuts: [Int]) -> (items: [Item], leftover: Int) {
        let wire = Array(test.wire.utf8)
        var decoder = ResponseDecoder(requestMethod: test.method)
        var items: [Item] = []
        var pending: [UInt8] = []
        var delivered = 0
        func record(_ item: Item) {
            if case .body(let more) = item, case .body(let bytes)? = items.last { items[items.count - 1] = .body(bytes + more) } else { items.append(item) }
        }
        feeding: for cut in cuts + [wire.count] where cut >= delivered {
            pending += wire[delivered..<cut]
            delivered = cut
            while true {
                let step = pending.withUnsafeBytes { decoder.decode($0) }
                switch step.event {
                case .needMore:
                    pending.removeFirst(step.consumed)
                    continue feeding
                case .head(let head): record(.head(status: head.status, framing: head.framing))
                case .body(let range): record(.body(Array(pending[range])))
                case .end: record(.end)
                case .switched:
                    if items.last != .switched { record(.switched) }
                    continue feeding
                case .error(let error):
                    record(.error(error.code))
                    return (items, pending.count)
                }
                pending.removeFirst(step.consumed)
                if step.event == .end { continue feeding }
            }
        }
        switch decoder.finish() {
        case .error(let error): record(.error(error.code))
        case .end where items.last != .end: record(.end)
        default: break
        }
        return (items, pending.count)
    }

    @Test(arguments: cases)
    func wholeSplitAndByteByByteAgree(_ test: Case) {
        let whole = Self.transcript(test, cuts: [])
        #expect(whole.items == test.expected, "whole")
        if case .error? = test.expected.last {} else { #expect(whole.leftover == test.leftover, "leftover") }
        let count = test.wire.utf8.count
        for offset in 0...count {
            #expect(Self.transcript(test, cuts: [offset]).items == whole.items, "split at \(offset)")
        }
        #expect(Self.transcript(test, cuts: Array(0...count)).items == whole.items, "byte by byte")
    }

    @Test func aHeadIsHeldToTheLimits() {
        var decoder = ResponseDecoder(limits: HTTPLimits(maxHeaderBytes: 64), requestMethod: "GET")
        let wire = Array(("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 100) + "\r\n\r\n").utf8)
        let step = wire.withUnsafeBytes { decoder.decode($0) }
        #expect(step.event == .error(HTTPParseError(.headersTooLarge)))
    }

    @Test func theHeadKeepsItsFieldsInOrder() throws {
        var decoder = ResponseDecoder(requestMethod: "GET")
        let wire = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n".utf8)
        let step = wire.withUnsafeBytes { decoder.decode($0) }
        guard case .head(let head) = step.event else {
            Issue.record("a head")
            return
        }
        #expect(head.fields.map(\.name) == ["Upgrade", "Connection", "Sec-WebSocket-Accept"])
        #expect(head.fields["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(step.consumed == wire.count)
    }

    /// A response's trailer section is read as its head is: lines may end in a bare LF, space
    /// before the colon is dropped, and obs-text is kept (a request's trailers are held to
    /// the request's rules: RequestDecoderCases).
    @Test func aResponsesTrailersAreReadAsItsHeadIs() {
        var decoder = ResponseDecoder(requestMethod: "GET")
        let wire = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nA: 1\nB : 2\r\nC: caf".utf8)
            + [0xE9] + Array("\n\n".utf8)
        var rest = wire[...]
        var events: [ResponseDecoder.Event] = []
        while !rest.isEmpty {
            let step = rest.withUnsafeBytes { decoder.decode($0) }
            events.append(step.event)
            if case .error = step.event { break }
            rest = rest.dropFirst(step.consumed)
        }
        #expect(events.last == .end)
        #expect(decoder.trailers.map(\.name) == ["A", "B", "C"])
        #expect(decoder.trailers["B"] == "2")
        #expect(decoder.trailers["C"] == "caf\u{FFFD}")
    }
}
