import LatchkeyHTTP
import Testing

/// The decoder table (RequestDecoderCases), each row run three ways: whole, split at every
/// offset, byte by byte. All three must give the same heads, body bytes, ends and error.
@Suite struct RequestDecoderTests {
    @Test("whole input gives the expected requests and error", arguments: DecoderCases.all)
    func whole(_ row: DecoderCase) {
        let transcript = DecoderDriver.whole(row.wire, limits: row.limits)
        let requests = transcript.requests
        #expect(requests.count == row.requests.count, "\(transcript)")
        for (got, want) in zip(requests, row.requests) {
            #expect(got.head.method == want.method)
            #expect(got.head.target == want.target)
            #expect(got.head.version == want.version)
            #expect(got.head.framing == want.framing)
            #expect(got.head.keepAlive == want.keepAlive)
            #expect(got.head.expectsContinue == want.expectsContinue)
            if let fields = want.fields { #expect(got.head.fields == fields) }
            #expect(got.body == Array(want.body.utf8))
            #expect(got.complete == want.complete)
            #expect(got.trailers == want.trailers)
        }
        #expect(transcript.error?.code == row.error, "\(transcript)")
    }

    @Test("split at every offset, same as whole", arguments: DecoderCases.all)
    func splitAtEveryOffset(_ row: DecoderCase) {
        let whole = DecoderDriver.whole(row.wire, limits: row.limits)
        for offset in 0...row.wire.count {
            let split = DecoderDriver.run(row.wire, cuts: [offset], limits: row.limits)
            #expect(split == whole, "split at \(offset): \(split) vs \(whole)")
        }
    }

    @Test("byte by byte, same as whole", arguments: DecoderCases.all)
    func byteByByte(_ row: DecoderCase) {
        let whole = DecoderDriver.whole(row.wire, limits: row.limits)
        #expect(DecoderDriver.byteByByte(row.wire, limits: row.limits) == whole)
    }

    /// The common methods come out as literals, every other token as it was sent: the
    /// same text either way, case kept (RFC 9110 §9.1).
    @Test(arguments: ["GET", "PUT", "POST", "HEAD", "PATCH", "DELETE", "OPTIONS", "get", "Post", "GOT", "PROPFIND", "M", "CONNECTX"])
    func theMethodIsTheTokenSent(method: String) {
        let transcript = DecoderDriver.whole(Array("\(method) / HTTP/1.1\r\nHost: h\r\n\r\n".utf8), limits: HTTPLimits())
        #expect(transcript.requests.map(\.head.method) == [method])
    }

    @Test func headWithoutBodyEndsOnTheNextCallConsumingNothing() {
        var decoder = RequestDecoder()
        let wire = [UInt8](wire: "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        let first = wire.withUnsafeBytes { decoder.decode($0) }
        #expect(first.consumed == wire.count)
        guard case .head = first.event else { Issue.record("expected a head"); return }
        #expect(decoder.isAwaitingHead == false)
        let second = [UInt8]().withUnsafeBytes { decoder.decode($0) }
        #expect(second == RequestDecoder.Step(consumed: 0, event: .end))
        #expect(decoder.isAwaitingHead)
    }

    @Test func incompleteHeadConsumesNothing() {
        var decoder = RequestDecoder()
        let partial = [UInt8](wire: "GET / HTTP/1.1\r\nHost: a\r\n")
        #expect(partial.withUnsafeBytes { decoder.decode($0) } == RequestDecoder.Step(consumed: 0, event: .needMore))
    }

    @Test func leadingEmptyLinesAreConsumedAtOnce() {
        var decoder = RequestDecoder()
        let crlfs = [UInt8](wire: "\r\n\r\n\r")
        #expect(crlfs.withUnsafeBytes { decoder.decode($0) } == RequestDecoder.Step(consumed: 4, event: .needMore))
    }

    @Test func bodyRangesIndexTheInputWithoutCopying() {
        var decoder = RequestDecoder()
        let head = [UInt8](wire: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
        _ = head.withUnsafeBytes { decoder.decode($0) }
        let body = [UInt8](wire: "3\r\nabc\r\n")
        let step = body.withUnsafeBytes { decoder.decode($0) }
        #expect(step == RequestDecoder.Step(consumed: 6, event: .body(3..<6)))
        // The CRLF after the data is consumed with the next size line; a partial size line
        // is consumed as it arrives, and .needMore then reports it.
        let rest = [UInt8](wire: "\r\n1")
        #expect(rest.withUnsafeBytes { decoder.decode($0) } == RequestDecoder.Step(consumed: 3, event: .needMore))
    }

    @Test func trailersResetWithTheNextHead() {
        let wire = [UInt8](wire: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
        var decoder = RequestDecoder()
        var pending = wire[...]
        var ends = 0
        while true {
            let step = Array(pending).withUnsafeBytes { decoder.decode($0) }
            pending = pending.dropFirst(step.consumed)
            switch step.event {
            case .end:
                ends += 1
                #expect(decoder.trailers == (ends == 1 ? ["T": "1"] : []))
            case .head:
                #expect(decoder.trailers == [])
            case .needMore, .error:
                #expect(ends == 2)
                return
            case .body:
                break
            }
        }
    }
}
