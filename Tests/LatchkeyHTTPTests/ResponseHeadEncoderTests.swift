import LatchkeyHTTP
import Testing

@Suite struct ResponseHeadEncoderTests {
    private func encode(_ status: Int, _ fields: HTTPFields) -> String {
        var buffer: [UInt8] = Array("prefix|".utf8)
        ResponseHeadEncoder.encode(status: status, fields: fields, into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    @Test func statusLineFieldsAndEmptyLine() {
        #expect(encode(200, ["Content-Type": "text/plain", "Set-Cookie": "a=1", "Set-Cookie": "b=2"])
            == "prefix|HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n")
    }

    @Test func noFields() {
        #expect(encode(204, []) == "prefix|HTTP/1.1 204 No Content\r\n\r\n")
    }

    @Test func unknownStatusHasAnEmptyReason() {
        #expect(encode(599, []) == "prefix|HTTP/1.1 599 \r\n\r\n")
        #expect(encode(42, []) == "prefix|HTTP/1.1 500 Internal Server Error\r\n\r\n")
    }

    @Test func refusesToSplitTheResponse() {
        // A value with CRLF must not start a new line; a name that is no token is dropped.
        let encoded = encode(302, [
            "Location": "/x\r\nSet-Cookie: evil=1",
            "Bad Name": "v",
            "X-Nul": "a\u{0}b",
            "X-Tab": "a\tb",
            "X-Utf8": "Zoë",
        ])
        #expect(encoded == "prefix|HTTP/1.1 302 Found\r\nLocation: /x  Set-Cookie: evil=1\r\nX-Nul: a b\r\nX-Tab: a\tb\r\nX-Utf8: Zoë\r\n\r\n")
    }

    /// Lines an upstream sent without the space after the colon and ended with a bare LF
    /// are written anew, each longer than its stored bytes: the most the encoder writes.
    @Test func linesWrittenAnewFitTheHeadsBound() throws {
        let names = (0..<40).map { "X-\($0)" }
        let wire = "HTTP/1.1 200 OK\n" + names.map { "\($0):v\n" }.joined() + "\n"
        var decoder = ResponseDecoder(requestMethod: "GET")
        let step = Array(wire.utf8).withUnsafeBytes { decoder.decode($0) }
        guard case .head(let head) = step.event else {
            Issue.record("no head: \(step.event)")
            return
        }
        #expect(encode(200, head.fields) == "prefix|HTTP/1.1 200 OK\r\n" + names.map { "\($0): v\r\n" }.joined() + "\r\n")
    }

    @Test func encodedHeadParsesBackLineByLine() {
        let fields: HTTPFields = ["Content-Length": "5", "X-A": "1"]
        var buffer: [UInt8] = []
        ResponseHeadEncoder.encode(status: 404, fields: fields, into: &buffer)
        var lines: [HTTPResponseLine] = []
        var start = 0
        for index in buffer.indices where buffer[index] == 0x0A {
            let line = Array(buffer[start...index])
            lines.append(try! #require(line.withUnsafeBytes { HTTPResponseLine.parse($0) }))
            start = index + 1
        }
        #expect(lines == [
            .status(version: .http1_1, code: 404),
            .field(HTTPField(name: "Content-Length", value: "5")),
            .field(HTTPField(name: "X-A", value: "1")),
            .end,
        ])
    }
}
