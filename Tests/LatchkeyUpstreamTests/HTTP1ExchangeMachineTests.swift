import LatchkeyHTTP
import LatchkeyLoop
import Testing
@testable import LatchkeyUpstream

/// The raw-connection exchange driven event by event: no sockets, no loop, no clock.
struct HTTP1ExchangeMachineTests {
    typealias Machine = HTTP1ExchangeMachine

    static let t0 = LoopInstant(nanoseconds: 1_000_000_000)
    static let idle = Duration.seconds(10)
    static let getHead = "GET / HTTP/1.1\r\nHost: up\r\n\r\n"

    static func at(_ seconds: Int) -> LoopInstant { t0.advanced(by: .seconds(seconds)) }

    static func machine(head: String = getHead, method: String = "GET", body: UpstreamBody = .none,
                        requestCloses: Bool = false) -> Machine {
        Machine(head: Array(head.utf8), method: method, body: body, requestCloses: requestCloses, idleTimeout: idle, now: t0)
    }

    /// A connected machine that has written its whole request.
    static func sent(_ body: UpstreamBody = .none, method: String = "GET", reused: Bool = false) -> Machine {
        var m = machine(method: method, body: body)
        m.connected(reused: reused)
        _ = write(&m)
        return m
    }

    /// The glue's write loop: what the connection took (at most `chunk` bytes a write) and
    /// the step that stopped it.
    static func write(_ m: inout Machine, chunk: Int = .max) -> (text: String, step: Machine.WriteStep) {
        var text = ""
        while true {
            let step = m.nextWrite()
            guard step == .write else { return (text, step) }
            _ = m.sendUnwritten(now: t0) { bytes in
                let n = min(chunk, bytes.count)
                text += String(decoding: bytes[..<n], as: UTF8.self)
                return n
            }
        }
    }

    static func send(_ m: inout Machine, _ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { m.bodyAvailable($0) }
    }

    /// What the glue did with the response's events.
    enum Seen: Equatable {
        case head(Int, [String: String])
        case body(String)
        case complete(reusable: Bool)
        case fail(UpstreamError.Code)
        case paused
    }

    /// The glue's read side: bytes not yet consumed are kept for the next feed, as the
    /// glue keeps them in its input buffer.
    struct Wire {
        var pending: [UInt8] = []
        /// The delegate's answer to each body slice.
        var wantsMore = true

        mutating func feed(_ m: inout Machine, _ text: String, at now: LoopInstant = t0) -> [Seen] {
            pending += Array(text.utf8)
            var seen: [Seen] = []
            while true {
                let step = pending.withUnsafeBytes { m.received($0, now: now) }
                let event = step.event
                if case .body(let range) = event {
                    seen.append(.body(String(decoding: pending[range], as: UTF8.self)))
                }
                pending.removeFirst(step.consumed)
                switch event {
                case .needMore: return seen
                case .paused: return seen + [.paused]
                case .head(let status, let fields, _):
                    seen.append(.head(status, Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })))
                case .body:
                    if m.delivered(more: wantsMore) { return seen + [.paused] }
                case .complete(let reusable): return seen + [.complete(reusable: reusable)]
                case .fail(let error): return seen + [.fail(error.code)]
                }
            }
        }
    }

    static func feed(_ m: inout Machine, _ text: String) -> [Seen] {
        var wire = Wire()
        return wire.feed(&m, text)
    }

    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"

    // MARK: the request

    @Test func aRequestWithoutBodyIsItsHeadAndStartsTheFirstByteTimerOnceWritten() {
        var m = Self.machine()
        #expect(m.nextWrite() == .none, "nothing is written before a connection")
        m.connected(reused: false)
        let (text, step) = Self.write(&m, chunk: 7)
        #expect(text == Self.getHead)
        #expect(step == .requestWritten)
        #expect(m.response == .awaitingHead(timed: true))
        #expect(m.nextWrite() == .none, "the timer starts once")
    }

    @Test func aSizedBodyQueuedBeforeTheConnectionGoesOutAfterTheHeadAndNoFurtherThanItsLength() {
        var m = Self.machine(head: "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", method: "POST", body: .length(5))
        #expect(Self.send(&m, "hel") == false, "no connection to write on yet")
        #expect(m.queuedBodyBytes > 3)
        m.connected(reused: false)
        #expect(Self.write(&m) == ("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhel", .waitForBody(askClient: true)))
        #expect(m.nextWrite() == .waitForBody(askClient: false), "the client is asked once per stall")
        #expect(Self.send(&m, "lo and more") == true, "the output was dry: write now")
        #expect(m.upload == .ended, "the length is reached")
        #expect(Self.write(&m) == ("lo", .requestWritten))
        #expect(m.bytesSent == 5)
        #expect(m.bodyEnded() == .none)
    }

    @Test func aStreamedBodyIsChunkedAndEndsWithTheLastChunk() {
        var m = Self.machine(head: "PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", method: "PUT", body: .streaming)
        m.connected(reused: false)
        _ = Self.write(&m)
        #expect(Self.send(&m, "hello") == true)
        #expect(Self.send(&m, String(repeating: "x", count: 26)) == false, "bytes wait already")
        #expect(Self.write(&m) == ("5\r\nhello\r\n1a\r\n" + String(repeating: "x", count: 26) + "\r\n", .waitForBody(askClient: true)))
        #expect(m.bodyEnded() == .write)
        #expect(Self.write(&m) == ("0\r\n\r\n", .requestWritten))
    }

    /// On a reused connection every written byte is kept for a resend, up to 64 KiB: a
    /// streamed body's first 64 KiB, framed, fit the room reserved at the start, so the
    /// queue never grows by copying what it holds.
    @Test func aStreamedBodyKeptForAResendFitsTheRoomReservedForIt() {
        var m = Self.machine(head: "PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", method: "PUT", body: .streaming)
        let reserved = m.outputCapacity
        m.connected(reused: true)
        let chunk = [UInt8](repeating: 0x78, count: 16 * 1024)
        for index in 0..<4 {
            _ = chunk.withUnsafeBytes { m.bodyAvailable($0) }
            // The fourth waits: written, it would take the kept bytes past the limit.
            if index < 3 { _ = Self.write(&m) }
        }
        #expect(m.queuedBodyBytes > RequestOutput.resendLimit, "the written bytes are held with the fourth chunk")
        #expect(m.outputCapacity == reserved)
    }

    @Test func aSizedBodyThatEndsShortFailsTheExchange() {
        var m = Self.machine(method: "POST", body: .length(5))
        m.connected(reused: false)
        _ = Self.send(&m, "he")
        #expect(m.bodyEnded() == .fail(UpstreamError(.sendFailed, detail: "the request body ended before its Content-Length")))
        #expect(m.isOver)
    }

    @Test func theHeadCarriesTheBodysFramingAndAnOriginFormTarget() throws {
        let request = UpstreamRequest(method: "POST", url: "https://api.example:8443/v1/items?a=1", fields: ["Host": "api.example:8443"],
                                      body: .length(3))
        #expect(request.origin == "https://api.example:8443" && request.target == "/v1/items?a=1")
        #expect(request.url == "https://api.example:8443/v1/items?a=1")
        let head = try #require(request.encodedHead())
        #expect(String(decoding: head, as: UTF8.self) == "POST /v1/items?a=1 HTTP/1.1\r\nHost: api.example:8443\r\nContent-Length: 3\r\n\r\n")
        let streamed = UpstreamRequest(method: "PUT", url: "http://up?q", fields: ["Host": "up"], body: .streaming)
        #expect(streamed.target == "/?q")
        #expect(String(decoding: try #require(streamed.encodedHead()), as: UTF8.self)
            == "PUT /?q HTTP/1.1\r\nHost: up\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(UpstreamRequest(method: "GET", url: "http://up", fields: [:]).target == "/")
        // Not absolute: kept whole for libcurl, no target for Latchkey's own HTTP/1.1.
        let relative = UpstreamRequest(method: "GET", url: "up/x", fields: [:])
        #expect(relative.target.isEmpty && relative.url == "up/x")
        #expect(UpstreamRequest(method: "GET", url: "http:///x", fields: [:]).target.isEmpty)
        #expect(UpstreamRequest(method: "G T", url: "http://up/", fields: [:]).encodedHead() == nil)
    }

    // MARK: the response

    @Test func aResponseIsDeliveredAndItsConnectionReusedWhenFedWholeSplitOrByteByByte() {
        for split in 0...Self.ok.utf8.count {
            var m = Self.sent()
            var wire = Wire()
            let bytes = Array(Self.ok.utf8)
            var seen = wire.feed(&m, String(decoding: bytes[..<split], as: UTF8.self))
            seen += wire.feed(&m, String(decoding: bytes[split...], as: UTF8.self))
            let bodies = seen.compactMap { if case .body(let text) = $0 { text } else { nil } }.joined()
            #expect(seen.first == .head(200, ["Content-Length": "5"]), "split at \(split)")
            #expect(bodies == "hello")
            #expect(seen.last == .complete(reusable: true))
            #expect(m.isOver && m.bytesReceived == 5)
        }
        var m = Self.sent()
        var wire = Wire()
        var seen: [Seen] = []
        for byte in Self.ok.utf8 { seen += wire.feed(&m, String(decoding: [byte], as: UTF8.self)) }
        #expect(seen.first == .head(200, ["Content-Length": "5"]))
        #expect(seen.last == .complete(reusable: true))
    }

    @Test func interimHeadsAreSkipped() {
        var m = Self.sent()
        #expect(Self.feed(&m, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + Self.ok)
            == [.head(200, ["Content-Length": "5"]), .body("hello"), .complete(reusable: true)])
    }

    @Test(arguments: [("HEAD", "200 OK\r\nContent-Length: 10"), ("GET", "204 No Content"), ("GET", "304 Not Modified\r\nContent-Length: 10")])
    func responsesWithoutContentEndWithTheirHead(method: String, statusAndFields: String) {
        var m = Self.sent(method: method)
        let seen = Self.feed(&m, "HTTP/1.1 \(statusAndFields)\r\n\r\n")
        #expect(seen.count == 2)
        #expect(seen.last == .complete(reusable: true))
    }

    @Test func aChunkedResponseIsDecoded() {
        var m = Self.sent()
        #expect(Self.feed(&m, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
            == [.head(200, ["Transfer-Encoding": "chunked"]), .body("abc"), .body("de"), .complete(reusable: true)])
    }

    @Test func aCloseDelimitedResponseEndsWithTheCloseAndTheConnectionWithIt() {
        var m = Self.sent()
        #expect(Self.feed(&m, "HTTP/1.1 200 OK\r\n\r\nsome") == [.head(200, [:]), .body("some")])
        #expect(m.peerClosed() == .complete)
        #expect(m.isOver)
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n",
    ])
    func aResponseThatClosesOrIsFollowedByMoreKeepsNoConnection(response: String) {
        var m = Self.sent()
        #expect(Self.feed(&m, response).last == .complete(reusable: false))
    }

    @Test func aRequestThatClosesKeepsNoConnection() {
        var m = Self.machine(requestCloses: true)
        m.connected(reused: false)
        _ = Self.write(&m)
        #expect(Self.feed(&m, Self.ok).last == .complete(reusable: false))
    }

    @Test func anAnswerBeforeTheWholeBodyKeepsNoConnection() {
        var m = Self.machine(method: "POST", body: .length(10))
        m.connected(reused: false)
        _ = Self.send(&m, "12345")
        _ = Self.write(&m)
        #expect(Self.feed(&m, "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n")
            == [.head(413, ["Content-Length": "0"]), .complete(reusable: false)])
    }

    @Test func aCompleteExchangeHoldsNoRequestBytes() {
        // The upstream answered before it read the whole request: what waited to be written
        // goes with the exchange, as after a failure or a cancel.
        var answered = Self.machine(method: "POST", body: .length(10))
        answered.connected(reused: false)
        _ = Self.send(&answered, "12345")
        #expect(answered.queuedBodyBytes > 5)
        #expect(Self.feed(&answered, "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n").last == .complete(reusable: false))
        #expect(answered.queuedBodyBytes == 0)
        var closed = Self.machine(method: "PUT", body: .streaming)
        closed.connected(reused: false)
        _ = Self.send(&closed, "abc")
        #expect(Self.feed(&closed, "HTTP/1.1 200 OK\r\n\r\nbye") == [.head(200, [:]), .body("bye")])
        #expect(closed.peerClosed() == .complete)
        #expect(closed.queuedBodyBytes == 0)
    }

    @Test func aWriteFailureAfterTheAnswerBeganReadsTheAnswerOn() {
        var m = Self.machine(method: "POST", body: .streaming)
        m.connected(reused: false)
        _ = Self.write(&m)
        var wire = Wire()
        #expect(wire.feed(&m, "HTTP/1.1 413 Content Too Large\r\nContent-Length: 3\r\n\r\n") == [.head(413, ["Content-Length": "3"])])
        #expect(m.connectionFailed(UpstreamError(.sendFailed, detail: "EPIPE"), whileWriting: true) == .readOn)
        #expect(m.upload == .abandoned)
        #expect(Self.send(&m, "more") == false)
        #expect(m.nextWrite() == .none)
        #expect(wire.feed(&m, "bye") == [.body("bye"), .complete(reusable: false)])
    }

    /// A broken answer, not a broken connection: `.other`, a 502 `bad_gateway` as on
    /// libcurl's path, not `upstream_reset`.
    @Test func anUnaskedSwitchAndAMalformedHeadFailAsABadGateway() {
        var m = Self.sent()
        #expect(Self.feed(&m, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n") == [.fail(.other)])
        var n = Self.sent()
        #expect(Self.feed(&n, "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n") == [.fail(.other)])
        #expect(n.isOver)
    }

    @Test func aCutResponseFails() {
        var m = Self.sent()
        #expect(Self.feed(&m, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhal") == [.head(200, ["Content-Length": "9"]), .body("hal")])
        #expect(m.peerClosed() == .fail(UpstreamError(.receiveFailed, detail: "the upstream's response was cut: \(HTTPParseError(.truncatedResponse))")))
    }

    // MARK: backpressure

    @Test func theDelegatesPauseHoldsTheRestUntilItResumes() {
        var m = Self.sent()
        var wire = Wire()
        wire.wantsMore = false
        #expect(wire.feed(&m, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n1\r\nb\r\n0\r\n\r\n")
            == [.head(200, ["Transfer-Encoding": "chunked"]), .body("a"), .paused])
        #expect(m.response == .streaming(paused: true))
        #expect(wire.feed(&m, "") == [.paused], "nothing is decoded while paused")
        #expect(m.resumeReceiving(now: Self.t0) == true)
        #expect(m.resumeReceiving(now: Self.t0) == false)
        wire.wantsMore = true
        #expect(wire.feed(&m, "") == [.body("b"), .complete(reusable: true)])
    }

    // MARK: resending on a reused connection

    @Test func aReusedConnectionClosedBeforeAnyAnswerSendsTheWholeRequestAgainOnceOnANewOne() {
        var m = Self.machine(head: "POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\n", method: "POST", body: .length(4))
        m.connected(reused: true)
        _ = Self.send(&m, "body")
        let first = Self.write(&m)
        #expect(first.step == .requestWritten)
        #expect(m.peerClosed() == .resend)
        #expect(m.link == .awaiting && m.response == .awaitingHead(timed: false))
        #expect(m.nextWrite() == .none, "nothing is written before the new connection")
        m.connected(reused: true)
        #expect(m.link == .new, "a resend never goes on a pooled connection")
        #expect(Self.write(&m) == (first.text, .requestWritten))
        #expect(m.peerClosed() == .fail(UpstreamError(.receiveFailed, detail: "the upstream closed the connection without answering")))
    }

    @Test func aReusedConnectionThatRefusesAWriteOrResetsResends() {
        var m = Self.machine()
        m.connected(reused: true)
        #expect(m.connectionFailed(UpstreamError(.sendFailed, detail: "EPIPE"), whileWriting: true) == .resend)
        var n = Self.sent(reused: true)
        #expect(n.connectionFailed(UpstreamError(.receiveFailed, detail: "ECONNRESET"), whileWriting: false) == .resend)
    }

    @Test func aNewConnectionIsNeverResent() {
        var m = Self.sent()
        let reset = UpstreamError(.receiveFailed, detail: "ECONNRESET")
        #expect(m.connectionFailed(reset, whileWriting: false) == .fail(reset))
    }

    @Test func noResendOnceTheUpstreamAnswered() {
        var m = Self.sent(reused: true)
        #expect(Self.feed(&m, "HTTP/1.1 2") == [])
        #expect(m.peerClosed() == .fail(UpstreamError(.receiveFailed, detail: "the upstream's response was cut: \(HTTPParseError(.truncatedResponse))")))
    }

    @Test func noResendOnceMoreBodyWasWrittenThanIsKept() {
        let size = RequestOutput.resendLimit + 1
        var m = Self.machine(method: "PUT", body: .length(UInt64(size)))
        m.connected(reused: true)
        _ = Self.send(&m, String(repeating: "x", count: size))
        #expect(Self.write(&m).step == .requestWritten)
        #expect(m.queuedBodyBytes == 0, "written bytes are no longer held")
        #expect(m.peerClosed() == .fail(UpstreamError(.receiveFailed, detail: "the upstream closed the connection without answering")))
    }

    @Test func aResendStillTakesTheRestOfTheBody() {
        var m = Self.machine(head: "PUT / HTTP/1.1\r\n\r\n", method: "PUT", body: .streaming)
        m.connected(reused: true)
        _ = Self.send(&m, "ab")
        #expect(Self.write(&m) == ("PUT / HTTP/1.1\r\n\r\n2\r\nab\r\n", .waitForBody(askClient: true)))
        #expect(m.connectionFailed(UpstreamError(.sendFailed, detail: "EPIPE"), whileWriting: true) == .resend)
        m.connected(reused: false)
        _ = Self.send(&m, "c")
        #expect(m.bodyEnded() == .none, "bytes wait already")
        #expect(Self.write(&m) == ("PUT / HTTP/1.1\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n", .requestWritten))
    }

    // MARK: timers

    @Test func theFirstByteTimerFailsOnlyAWrittenRequestStillWithoutAnswer() {
        var unsent = Self.machine()
        #expect(unsent.firstByteTimerFired() == nil)
        var answered = Self.sent()
        _ = Self.feed(&answered, "H")
        #expect(answered.firstByteTimerFired() == nil)
        var m = Self.sent()
        #expect(m.firstByteTimerFired()?.code == .firstByteTimeout)
        #expect(m.isOver)
    }

    @Test func theIdleTimerCountsOnlyTheUpstreamsSilence() {
        var m = Self.machine(method: "POST", body: .streaming)
        #expect(m.idleTimerFired(now: Self.at(20)) == .rearm(at: Self.at(30)), "connecting is the connect timeout's")
        m.connected(reused: false)
        _ = Self.write(&m)
        #expect(m.idleTimerFired(now: Self.at(40)) == .rearm(at: Self.at(50)), "waiting for the client's body")
        var n = Self.sent()
        #expect(n.idleTimerFired(now: Self.at(20)) == .rearm(at: Self.at(30)), "the first-byte timeout applies")
        var wire = Wire()
        #expect(wire.feed(&n, "HTTP/1.1 200 OK\r\n", at: Self.at(25)) == [])
        #expect(n.idleTimerFired(now: Self.at(30)) == .rearm(at: Self.at(35)))
        #expect(n.idleTimerFired(now: Self.at(35)) == .fail(UpstreamError(.idleTimeout, detail: "upstream idle for longer than the idle timeout")))
        #expect(n.idleTimerFired(now: Self.at(40)) == .ignore)
    }

    // MARK: the end

    @Test func aCancelledExchangeIgnoresEverything() {
        var m = Self.sent()
        #expect(m.cancel() == true)
        #expect(m.cancel() == false)
        #expect(Self.feed(&m, Self.ok) == [])
        #expect(m.peerClosed() == .ignore)
        #expect(m.firstByteTimerFired() == nil)
    }
}
