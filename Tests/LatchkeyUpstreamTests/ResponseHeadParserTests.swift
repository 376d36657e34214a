import CCurlShims
import LatchkeyHTTP
import LatchkeyTestSupport
import Testing
@testable import LatchkeyUpstream

@Suite struct ResponseHeadParserTests {
    private func feed(_ lines: [String]) -> [ResponseHeadParser.Outcome] {
        var parser = ResponseHeadParser()
        return lines.map { line in
            var copy = line
            return copy.withUTF8 { parser.consume(UnsafeRawBufferPointer($0)) }
        }
    }

    @Test func finalHeadKeepsOrderAndDuplicates() {
        let outcomes = feed(["HTTP/1.1 200 OK\r\n", "A: 1\r\n", "Set-Cookie: x\r\n", "a: 2\r\n", "Set-Cookie: y\r\n", "\r\n"])
        let expected: HTTPFields = ["A": "1", "Set-Cookie": "x", "a": "2", "Set-Cookie": "y"]
        #expect(outcomes.last == .head(status: 200, fields: expected))
        #expect(outcomes.dropLast().allSatisfy { $0 == .needMore })
    }

    @Test func interimHeadsAreDropped() {
        let outcomes = feed([
            "HTTP/1.1 100 Continue\r\n", "\r\n",
            "HTTP/1.1 103 Early Hints\r\n", "Link: </s.css>\r\n", "\r\n",
            "HTTP/1.1 404 Not Found\r\n", "X: y\r\n", "\r\n",
        ])
        #expect(outcomes[1] == .interim(status: 100))
        #expect(outcomes[4] == .interim(status: 103))
        #expect(outcomes[7] == .head(status: 404, fields: ["X": "y"]))
    }

    @Test func http2StatusLineAndTrailersAfterTheHead() {
        let outcomes = feed(["HTTP/2 204 \r\n", "content-type: text/plain\r\n", "\r\n", "x-trailer: 1\r\n", "\r\n"])
        #expect(outcomes[2] == .head(status: 204, fields: ["content-type": "text/plain"]))
        #expect(outcomes[3] == .ignored)
        #expect(outcomes[4] == .ignored)
    }

    @Test(arguments: ["garbage\r\n", "HTTP/1.1 2000 OK\r\n", "HTTP/1.1 099 Low\r\n"])
    func malformedStatusLineIsInvalid(line: String) {
        #expect(feed([line]) == [.invalid])
    }

    @Test func fieldBeforeStatusAndObsFoldAreInvalid() {
        #expect(feed(["X: 1\r\n"]) == [.invalid])
        #expect(feed(["HTTP/1.1 200 OK\r\n", "X: 1\r\n", " folded\r\n"]).last == .invalid)
    }
}

@Suite struct CurlHeaderListTests {
    private func lines(_ fields: HTTPFields) -> [String] {
        let list = CurlHeaderList(fields)
        var result: [String] = []
        var node = list.list
        while let current = node {
            result.append(String(cString: current.pointee.data))
            node = current.pointee.next
        }
        return result
    }

    @Test func linesInOrderWithCurlDefaultsSuppressed() {
        #expect(lines(["Host": "h", "X-A": "1", "X-Empty": ""]) == ["Host: h", "X-A: 1", "X-Empty;", "Accept:", "Expect:"])
    }

    @Test func unsafeFieldsAreDroppedAndAnEmptyListIsNil() {
        #expect(lines(["X-Bad": "a\r\nInjected: 1", "X-Ok": "1"]) == ["X-Ok: 1", "Accept:", "Expect:"])
        #expect(lines(["Accept": "a", "Expect": "b"]).count == 2)
    }

    @Test func callerAcceptAndExpectWin() {
        #expect(lines(["accept": "*/*", "EXPECT": "100-continue"]) == ["accept: */*", "EXPECT: 100-continue"])
    }

    @Test func fieldsThatWouldInjectLinesAreDropped() {
        #expect(lines(["X-Bad": "a\r\nInjected: 1", "X-Ok": "fine", "Bad\nName": "v"]) == ["X-Ok: fine", "Accept:", "Expect:"])
    }
}

@Suite struct UpstreamErrorTests {
    @Test func curlCodesMapToOurs() {
        #expect(UpstreamError.Code(curlCode: CURLE_COULDNT_CONNECT) == .connectFailed)
        #expect(UpstreamError.Code(curlCode: CURLE_COULDNT_RESOLVE_HOST) == .resolveFailed)
        #expect(UpstreamError.Code(curlCode: CURLE_OPERATION_TIMEDOUT) == .connectTimeout)
        #expect(UpstreamError.Code(curlCode: CURLE_PEER_FAILED_VERIFICATION) == .tls)
        #expect(UpstreamError.Code(curlCode: CURLE_SSL_CONNECT_ERROR) == .tls)
        #expect(UpstreamError.Code(curlCode: CURLE_SEND_ERROR) == .sendFailed)
        #expect(UpstreamError.Code(curlCode: CURLE_RECV_ERROR) == .receiveFailed)
        #expect(UpstreamError.Code(curlCode: CURLE_PARTIAL_FILE) == .receiveFailed)
        #expect(UpstreamError.Code(curlCode: CURLE_GOT_NOTHING) == .receiveFailed)
        #expect(UpstreamError.Code(curlCode: CURLE_URL_MALFORMAT) == .other)
    }

    @Test func timeoutsAreTimeouts() {
        #expect(UpstreamError(.connectTimeout, detail: "").isTimeout)
        #expect(UpstreamError(.firstByteTimeout, detail: "").isTimeout)
        #expect(UpstreamError(.idleTimeout, detail: "").isTimeout)
        #expect(!UpstreamError(.connectFailed, detail: "").isTimeout)
        #expect(!UpstreamError(.receiveFailed, detail: "").isTimeout)
    }

    @Test func urlsAreRedacted() {
        let text = "Failed to connect to https://api.test/v1?api_key=secret port 443: Connection refused\n"
        #expect(UpstreamError.redacted(text) == "Failed to connect to [redacted] port 443: Connection refused")
        #expect(UpstreamError.redacted("Could not resolve host: nonexistent.invalid") == "Could not resolve host: nonexistent.invalid")
    }
}

@Suite struct ByteQueueTests {
    @Test func readsInOrderAcrossAppends() {
        var queue = ByteQueue()
        var out: [UInt8] = []
        var next = 0
        var buffer = [UInt8](repeating: 0, count: 7000)
        for round in 0..<200 {
            let piece = patternBody(1000 + round * 3, from: next)
            next += piece.count
            piece.withUnsafeBytes { queue.append($0) }
            let n = buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: round % 2 == 0 ? 700 : 7000) }
            out += buffer[..<n]
        }
        while !queue.isEmpty {
            let n = buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: 4096) }
            out += buffer[..<n]
        }
        #expect(out == patternBody(next))
        #expect(queue.count == 0)
    }

    /// A queue made holding a head (as its ring when the head fills it, else copied into a
    /// larger one): the head first, then what is appended, across growth.
    @Test(arguments: [0, 1, 70_000])
    func aQueueMadeHoldingBytesSendsThemFirst(extraRoom: Int) {
        let head = patternBody(300)
        var queue = ByteQueue(holding: head, reserving: head.count + extraRoom)
        #expect(queue.count == 300)
        #expect(queue.capacity == head.count + extraRoom)
        var buffer = [UInt8](repeating: 0, count: 100)
        var out = Array(buffer[..<buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: 100) }])
        let more = patternBody(50_000, from: 300)
        more.withUnsafeBytes { queue.append($0) }
        buffer = [UInt8](repeating: 0, count: 70_000)
        while !queue.isEmpty {
            out += buffer[..<buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: 7000) }]
        }
        #expect(out == patternBody(50_300))
    }

    /// Appends that wrap around the ring's end, reads that cross it, and growth while the
    /// waiting bytes wrap: always the bytes in the order they came.
    @Test(arguments: [0, 16 * 1024, 65_536])
    func keepsTheOrderAcrossWrapsAndGrowth(reserved: Int) {
        var queue = ByteQueue(reserving: reserved)
        var generator = SeededGenerator(seed: UInt64(reserved) + 7)
        var expected: [UInt8] = []
        var out: [UInt8] = []
        var next = 0
        var buffer = [UInt8](repeating: 0, count: 70_000)
        for _ in 0..<400 {
            let piece = patternBody(Int(generator.next() % 20_000), from: next)
            next += piece.count
            expected += piece
            piece.withUnsafeBytes { queue.append($0) }
            let n = buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: Int(generator.next() % 24_000)) }
            out += buffer[..<n]
            #expect(queue.count == expected.count - out.count)
        }
        while !queue.isEmpty {
            let n = buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: 65_536) }
            out += buffer[..<n]
        }
        #expect(out == expected)
    }
}
