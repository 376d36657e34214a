import LatchkeyHTTP
import Testing

/// The request heads Latchkey writes itself (an Upgrade handshake to the upstream).
@Suite struct RequestHeadEncoderTests {
    private func encode(_ method: String, _ target: String, _ fields: HTTPFields) -> String? {
        var buffer: [UInt8] = []
        guard RequestHeadEncoder.encode(method: method, target: target, fields: fields, into: &buffer) else {
            #expect(buffer.isEmpty)
            return nil
        }
        return String(decoding: buffer, as: UTF8.self)
    }

    @Test func requestLineFieldsAndEmptyLine() {
        #expect(encode("GET", "/chat?room=1", ["Host": "api.test", "Upgrade": "websocket", "Connection": "Upgrade"])
            == "GET /chat?room=1 HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
    }

    @Test func aValueCannotSplitTheRequest() {
        #expect(encode("GET", "/", ["Authorization": "Bearer x\r\nX-Evil: 1", "Bad Name": "v"])
            == "GET / HTTP/1.1\r\nAuthorization: Bearer x  X-Evil: 1\r\n\r\n")
    }

    @Test(arguments: [("GET", "/a b"), ("GET", "/a\r\n"), ("GE T", "/"), ("", "/"), ("GET", "")])
    func aRequestLineThatCannotBeWrittenIsRefused(_ method: String, _ target: String) {
        #expect(encode(method, target, []) == nil)
    }
}
