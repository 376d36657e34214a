import LatchkeyHTTP
import Testing

@Suite struct ChunkedEncoderTests {
    @Test(arguments: [(1, "1"), (10, "a"), (26, "1a"), (255, "ff"), (256, "100"), (65536, "10000"), (Int.max, "7fffffffffffffff")])
    func chunkHeaderIsLowercaseHex(size: Int, hex: String) {
        var buffer: [UInt8] = []
        ChunkedEncoder.appendChunkHeader(size: size, into: &buffer)
        #expect(buffer == Array("\(hex)\r\n".utf8))
    }

    @Test func encodedBodyDecodes() {
        // What we send is what our own decoder accepts.
        var wire = Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for piece in ["hello", " ", String(repeating: "x", count: 300)] {
            ChunkedEncoder.appendChunkHeader(size: piece.utf8.count, into: &wire)
            wire += piece.utf8
            wire += ChunkedEncoder.chunkTerminator
        }
        wire += ChunkedEncoder.lastChunk
        let requests = DecoderDriver.whole(wire).requests
        #expect(requests.count == 1)
        #expect(requests.first?.body == Array(("hello " + String(repeating: "x", count: 300)).utf8))
        #expect(requests.first?.complete == true)
    }
}
