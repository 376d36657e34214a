import LatchkeyHTTP
import Testing

@Suite struct HTTPResponseLineTests {
    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\n", HTTPResponseLine.status(version: .http1_1, code: 200)),
        ("HTTP/1.0 404 Not Found\r\n", .status(version: .http1_0, code: 404)),
        ("HTTP/2 200 \r\n", .status(version: .http2, code: 200)),
        ("HTTP/2 304\r\n", .status(version: .http2, code: 304)),
        ("HTTP/3 101\r\n", .status(version: HTTPVersion(major: 3, minor: 0), code: 101)),
        ("HTTP/1.1 100 Continue\r\n", .status(version: .http1_1, code: 100)),
        ("HTTP/1.1 599 Whatever Ünicode\r\n", .status(version: .http1_1, code: 599)),
        ("Content-Type: text/html\r\n", .field(HTTPField(name: "Content-Type", value: "text/html"))),
        ("set-cookie:  a=1; Path=/ \t\r\n", .field(HTTPField(name: "set-cookie", value: "a=1; Path=/"))),
        ("X-Empty:\r\n", .field(HTTPField(name: "X-Empty", value: ""))),
        ("X-Space : v\r\n", .field(HTTPField(name: "X-Space", value: "v"))),
        ("X-LF-Only: v\n", .field(HTTPField(name: "X-LF-Only", value: "v"))),
        ("X-No-Terminator: v", .field(HTTPField(name: "X-No-Terminator", value: "v"))),
        ("X-Utf8: Zoë\r\n", .field(HTTPField(name: "X-Utf8", value: "Zoë"))),
        ("\r\n", .end),
        ("\n", .end),
    ])
    func parses(line: String, expected: HTTPResponseLine) {
        #expect(HTTPResponseLine.parse(line) == expected)
    }

    @Test(arguments: [
        "HTTP/1.1 20 OK\r\n",
        "HTTP/1.1 2000 OK\r\n",
        "HTTP/1.1 099 Low\r\n",
        "HTTP/1.1  200 OK\r\n",
        "HTTP/1.1\r\n",
        "HTTP/x 200\r\n",
        "HTTP/1.1 200 O\u{0}K\r\n",
        "Bad Name: v\r\n",
        ": v\r\n",
        "NoColon\r\n",
        " folded continuation\r\n",
        "\tfolded\r\n",
        "X: a\u{0}b\r\n",
        "X: a\rb\r\n",
        "X: a\r\r\n",
        "X: \u{7F}\r\n",
    ])
    func rejects(line: String) {
        #expect(HTTPResponseLine.parse(line) == nil)
    }

    @Test func invalidUTF8IsRepairedNotRefused() {
        let bytes: [UInt8] = Array("X-Latin1: caf".utf8) + [0xE9] + Array("\r\n".utf8)
        let line = bytes.withUnsafeBytes { HTTPResponseLine.parse($0) }
        #expect(line == .field(HTTPField(name: "X-Latin1", value: "caf\u{FFFD}")))
    }
}
