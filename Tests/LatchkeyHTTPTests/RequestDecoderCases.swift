import LatchkeyHTTP
import Testing

/// What one decoded request should look like. `fields == nil` leaves the fields unchecked.
struct ExpectedRequest: Sendable {
    var method = "GET"
    var target = "/"
    var version = HTTPVersion.http1_1
    var fields: HTTPFields?
    var framing = BodyFraming.none
    var keepAlive = true
    var expectsContinue = false
    var body = ""
    var complete = true
    var trailers: HTTPFields = []
}

/// One row of the decoder table: bytes on the wire, the requests they hold, and the error
/// that ends them (nil: none).
struct DecoderCase: Sendable, CustomTestStringConvertible {
    var label: String
    var wire: [UInt8]
    var limits = HTTPLimits()
    var requests: [ExpectedRequest]
    var error: HTTPParseError.Code?

    var testDescription: String { label }

    init(_ label: String, _ wire: String, limits: HTTPLimits = .init(), _ requests: [ExpectedRequest] = [], error: HTTPParseError.Code? = nil) {
        self.init(label, bytes: Array(wire.utf8), limits: limits, requests, error: error)
    }

    /// For wire bytes a String cannot hold (invalid UTF-8).
    init(_ label: String, bytes: [UInt8], limits: HTTPLimits = .init(), _ requests: [ExpectedRequest] = [], error: HTTPParseError.Code? = nil) {
        self.label = label
        self.wire = bytes
        self.limits = limits
        self.requests = requests
        self.error = error
    }
}

private let host = "Host: example.com\r\n"
private func post(_ head: String) -> String { "POST /p HTTP/1.1\r\n" + host + head }
private func chunked(_ body: String) -> String { post("Transfer-Encoding: chunked\r\n\r\n") + body }
/// A chunked request whose body failed after `body` was delivered.
private func brokenChunked(_ body: String = "") -> [ExpectedRequest] {
    [ExpectedRequest(method: "POST", target: "/p", framing: .chunked, body: body, complete: false)]
}

/// Every decoder case, valid and hostile, each run whole, split at every offset and byte
/// by byte (RequestDecoderTests).
enum DecoderCases {
    static let valid: [DecoderCase] = [
        DecoderCase("simple GET", "GET / HTTP/1.1\r\n\(host)\r\n",
                    [ExpectedRequest(fields: ["Host": "example.com"])]),
        DecoderCase("fields keep order, duplicates and spelling; values trimmed",
                    "GET /a?b=c HTTP/1.1\r\nhost: x\r\nSet-Cookie: a=1\r\nX-Empty:\r\nset-cookie: b=2\r\nX-Pad: \t v  a \t \r\n\r\n",
                    [ExpectedRequest(target: "/a?b=c", fields: [
                        "host": "x", "Set-Cookie": "a=1", "X-Empty": "", "set-cookie": "b=2", "X-Pad": "v  a",
                    ])]),
        DecoderCase("UTF-8 obs-text in a value", "GET / HTTP/1.1\r\n\(host)X-Name: Zoë\r\n\r\n",
                    [ExpectedRequest(fields: ["Host": "example.com", "X-Name": "Zoë"])]),
        DecoderCase("lowercase method and absolute-form target",
                    "get http://example.com/x HTTP/1.1\r\n\(host)\r\n",
                    [ExpectedRequest(method: "get", target: "http://example.com/x")]),
        DecoderCase("OPTIONS *", "OPTIONS * HTTP/1.1\r\n\(host)\r\n", [ExpectedRequest(method: "OPTIONS", target: "*")]),
        DecoderCase("empty Host is allowed", "GET / HTTP/1.1\r\nHost:\r\n\r\n", [ExpectedRequest(fields: ["Host": ""])]),
        DecoderCase("Host with IPv6 literal and port", "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", [ExpectedRequest()]),
        DecoderCase("leading empty lines are ignored (RFC 9112 §2.2)", "\r\n\r\nGET / HTTP/1.1\r\n\(host)\r\n", [ExpectedRequest()]),
        DecoderCase("POST with Content-Length", post("Content-Length: 11\r\n\r\nhello world"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .length(11), body: "hello world")]),
        DecoderCase("Content-Length: 0 is an explicit empty body", post("Content-Length: 0\r\n\r\n"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .length(0))]),
        DecoderCase("identical Content-Length lines and lists become one field",
                    post("Content-Length: 3\r\nX: y\r\ncontent-length: 3, 003\r\n\r\nabc"),
                    [ExpectedRequest(method: "POST", target: "/p",
                                     fields: ["Host": "example.com", "Content-Length": "3", "X": "y"],
                                     framing: .length(3), body: "abc")]),
        DecoderCase("body not complete yet", post("Content-Length: 10\r\n\r\nabc"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .length(10), body: "abc", complete: false)]),
        DecoderCase("chunked body", chunked("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .chunked, body: "hello world")]),
        DecoderCase("chunked: upper-case hex, leading zeros, extensions",
                    chunked("00A;name=value ; quoted=\"a b\"\r\n0123456789\r\n1 ;x\r\n!\r\n0;last\r\n\r\n"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .chunked, body: "0123456789!")]),
        DecoderCase("chunked: trailers are parsed and exposed",
                    chunked("3\r\nabc\r\n0\r\nChecksum: 1234\r\nX-T: \tv \r\n\r\n"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .chunked, body: "abc",
                                     trailers: ["Checksum": "1234", "X-T": "v"])]),
        DecoderCase("Transfer-Encoding names are case-insensitive, empty list elements skipped",
                    post("Transfer-Encoding: , CHUNKED\r\n\r\n0\r\n\r\n"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .chunked)]),
        DecoderCase("pipelined requests", "GET /1 HTTP/1.1\r\n\(host)\r\n"
                        + post("Content-Length: 2\r\n\r\nhi")
                        + chunked("1\r\nx\r\n0\r\n\r\n")
                        + "GET /4 HTTP/1.1\r\n\(host)Connection: close\r\n\r\n",
                    [ExpectedRequest(target: "/1"),
                     ExpectedRequest(method: "POST", target: "/p", framing: .length(2), body: "hi"),
                     ExpectedRequest(method: "POST", target: "/p", framing: .chunked, body: "x"),
                     ExpectedRequest(target: "/4", keepAlive: false)]),
        DecoderCase("stray CRLF after a body before the next request",
                    post("Content-Length: 1\r\n\r\nx") + "\r\nGET / HTTP/1.1\r\n\(host)\r\n",
                    [ExpectedRequest(method: "POST", target: "/p", framing: .length(1), body: "x"), ExpectedRequest()]),
        DecoderCase("Expect: 100-continue", post("Expect: 100-Continue\r\nContent-Length: 1\r\n\r\nx"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .length(1), expectsContinue: true, body: "x")]),
        DecoderCase("Connection: close on HTTP/1.1", "GET / HTTP/1.1\r\n\(host)Connection: foo, Close\r\n\r\n",
                    [ExpectedRequest(keepAlive: false)]),
        DecoderCase("HTTP/1.0 closes by default and needs no Host", "GET / HTTP/1.0\r\n\r\n",
                    [ExpectedRequest(version: .http1_0, keepAlive: false)]),
        DecoderCase("HTTP/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\nGET /2 HTTP/1.0\r\n\r\n",
                    [ExpectedRequest(version: .http1_0, keepAlive: true),
                     ExpectedRequest(target: "/2", version: .http1_0, keepAlive: false)]),
        DecoderCase("HTTP/1.0 ignores 100-continue", "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n",
                    [ExpectedRequest(method: "POST", version: .http1_0, framing: .length(0), keepAlive: false)]),
        DecoderCase("limits: exactly at every bound",
                    "GET /23456789 HTTP/1.1\r\nHost: a\r\nB: 1\r\n\r\n",
                    limits: HTTPLimits(maxRequestLineBytes: 22, maxHeaderBytes: 41, maxHeaderCount: 2),
                    [ExpectedRequest(target: "/23456789")]),
        DecoderCase("a valid request, then a broken one", "GET / HTTP/1.1\r\n\(host)\r\nGET / HTTP/1.1\r\n\r\n",
                    [ExpectedRequest()], error: .missingHost),
    ]

    static let hostile: [DecoderCase] = [
        // Framing: what request smuggling is made of.
        DecoderCase("CL + TE", post("Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), error: .contentLengthWithTransferEncoding),
        DecoderCase("TE + CL", post("Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n"), error: .contentLengthWithTransferEncoding),
        DecoderCase("Content-Length lines conflict", post("Content-Length: 4\r\nContent-Length: 5\r\n\r\nabcde"), error: .conflictingContentLength),
        DecoderCase("Content-Length list conflicts", post("Content-Length: 5, 6\r\n\r\nabcde"), error: .conflictingContentLength),
        DecoderCase("Content-Length with sign", post("Content-Length: +5\r\n\r\nabcde"), error: .invalidContentLength),
        DecoderCase("Content-Length negative", post("Content-Length: -1\r\n\r\n"), error: .invalidContentLength),
        DecoderCase("Content-Length hex", post("Content-Length: 0x10\r\n\r\n"), error: .invalidContentLength),
        DecoderCase("Content-Length empty", post("Content-Length: \r\n\r\n"), error: .invalidContentLength),
        DecoderCase("Content-Length empty list element", post("Content-Length: 5,\r\n\r\nabcde"), error: .invalidContentLength),
        DecoderCase("Content-Length with inner space", post("Content-Length: 1 0\r\n\r\n"), error: .invalidContentLength),
        DecoderCase("Content-Length overflows 64 bits", post("Content-Length: 18446744073709551616\r\n\r\n"), error: .invalidContentLength),
        DecoderCase("TE: gzip", post("Transfer-Encoding: gzip\r\n\r\n"), error: .unsupportedTransferEncoding),
        DecoderCase("TE: gzip, chunked", post("Transfer-Encoding: gzip, chunked\r\n\r\n"), error: .unsupportedTransferEncoding),
        DecoderCase("TE: chunked, gzip", post("Transfer-Encoding: chunked, gzip\r\n\r\n"), error: .chunkedNotFinal),
        DecoderCase("TE: chunked not last across lines", post("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n"), error: .chunkedNotFinal),
        DecoderCase("TE: chunked twice", post("Transfer-Encoding: chunked, chunked\r\n\r\n"), error: .chunkedNotFinal),
        DecoderCase("TE: empty", post("Transfer-Encoding: \r\n\r\n"), error: .chunkedNotFinal),
        DecoderCase("TE: chunked with a parameter", post("Transfer-Encoding: chunked;q=1\r\n\r\n"), error: .unsupportedTransferEncoding),
        DecoderCase("TE in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", error: .transferEncodingInHTTP10),

        // Field lines.
        DecoderCase("NUL in a field value", "GET / HTTP/1.1\r\n\(host)X: a\u{0}b\r\n\r\n", error: .invalidFieldValue),
        DecoderCase("NUL in a field name", "GET / HTTP/1.1\r\n\(host)X\u{0}Y: a\r\n\r\n", error: .invalidFieldName),
        DecoderCase("DEL in a field value", "GET / HTTP/1.1\r\n\(host)X: a\u{7F}\r\n\r\n", error: .invalidFieldValue),
        DecoderCase("ESC in a field value", "GET / HTTP/1.1\r\n\(host)X: \u{1B}[31m\r\n\r\n", error: .invalidFieldValue),
        DecoderCase("CR in a value", "GET / HTTP/1.1\r\n\(host)X: a\rb\r\n\r\n", error: .invalidLineEnding),
        DecoderCase("CR at the end of a value", "GET / HTTP/1.1\r\n\(host)X: a\r\r\n\r\n", error: .invalidLineEnding),
        DecoderCase("CR in a field name", "GET / HTTP/1.1\r\n\(host)X\rY: a\r\n\r\n", error: .invalidLineEnding),
        DecoderCase("CR starting a field line", "GET / HTTP/1.1\r\n\(host)\rX: a\r\n\r\n", error: .invalidLineEnding),
        DecoderCase("CR in the request line", "GET /\r HTTP/1.1\r\n\(host)\r\n", error: .invalidLineEnding),
        DecoderCase("CR ending the request line early", "GET / HTTP/1.1\rX\r\n\(host)\r\n", error: .invalidLineEnding),
        DecoderCase("bare LF ends the lines", "GET / HTTP/1.1\n\(host)\n", error: .invalidLineEnding),
        DecoderCase("bare LF inside a value", "GET / HTTP/1.1\r\n\(host)X: a\nY: b\r\n\r\n", error: .invalidLineEnding),
        DecoderCase("bare LF as the final empty line", "GET / HTTP/1.1\r\n\(host)\n", error: .invalidLineEnding),
        DecoderCase("obs-fold", "GET / HTTP/1.1\r\n\(host)X: a\r\n b\r\n\r\n", error: .obsFold),
        DecoderCase("obs-fold with a tab", "GET / HTTP/1.1\r\n\(host)X: a\r\n\tb\r\n\r\n", error: .obsFold),
        DecoderCase("space before colon", "GET / HTTP/1.1\r\nHost : example.com\r\n\r\n", error: .whitespaceBeforeColon),
        DecoderCase("tab before colon", "GET / HTTP/1.1\r\n\(host)Content-Length\t: 0\r\n\r\n", error: .whitespaceBeforeColon),
        DecoderCase("space inside a field name", "GET / HTTP/1.1\r\n\(host)X Y: a\r\n\r\n", error: .invalidFieldName),
        DecoderCase("field line without a colon", "GET / HTTP/1.1\r\n\(host)NoColon\r\n\r\n", error: .invalidFieldName),
        DecoderCase("empty field name", "GET / HTTP/1.1\r\n\(host): a\r\n\r\n", error: .invalidFieldName),
        DecoderCase("non-token byte in a field name", "GET / HTTP/1.1\r\n\(host)X(Y): a\r\n\r\n", error: .invalidFieldName),
        DecoderCase("invalid UTF-8 in a value", bytes: Array("GET / HTTP/1.1\r\n\(host)X: ".utf8) + [0xC3, 0x28] + Array("\r\n\r\n".utf8), error: .invalidFieldValue),

        // Host.
        DecoderCase("missing Host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", error: .missingHost),
        DecoderCase("two Host lines", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", error: .multipleHost),
        DecoderCase("two Host lines in HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n", error: .multipleHost),
        DecoderCase("Host with userinfo", "GET / HTTP/1.1\r\nHost: evil@example.com\r\n\r\n", error: .invalidHost),
        DecoderCase("Host with a path", "GET / HTTP/1.1\r\nHost: example.com/x\r\n\r\n", error: .invalidHost),
        DecoderCase("Host with inner space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", error: .invalidHost),

        // Request line.
        DecoderCase("HTTP/2.0 request line", "GET / HTTP/2.0\r\n\(host)\r\n", error: .unsupportedVersion),
        DecoderCase("HTTP/2 connection preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", error: .unsupportedVersion),
        DecoderCase("HTTP/1.2", "GET / HTTP/1.2\r\n\(host)\r\n", error: .unsupportedVersion),
        DecoderCase("HTTP/1.10", "GET / HTTP/1.10\r\n\(host)\r\n", error: .badRequestLine),
        DecoderCase("lowercase http", "GET / http/1.1\r\n\(host)\r\n", error: .badRequestLine),
        DecoderCase("HTTP/0.9 style", "GET /\r\n\r\n", error: .badRequestLine),
        DecoderCase("tab as separator", "GET\t/ HTTP/1.1\r\n\(host)\r\n", error: .badRequestLine),
        DecoderCase("empty method", " / HTTP/1.1\r\n\(host)\r\n", error: .badRequestLine),
        DecoderCase("space in the target", "GET /a b HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        DecoderCase("two spaces before the target", "GET  / HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        DecoderCase("CTL in the target", "GET /a\u{1}b HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        DecoderCase("non-ASCII in the target", "GET /é HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        DecoderCase("TLS ClientHello on a plain port", "\u{16}\u{3}\u{1}\u{0}\u{A5}\u{1}\u{0}\u{0}\u{A1}\u{3}\u{3}\r\n\r\n", error: .badRequestLine),

        // Limits.
        DecoderCase("request line too long (414)", "GET /\(String(repeating: "a", count: 100)) HTTP/1.1\r\n\(host)\r\n",
                    limits: HTTPLimits(maxRequestLineBytes: 64), error: .requestLineTooLong),
        DecoderCase("request line one byte too long", "GET /234567890 HTTP/1.1\r\nHost: a\r\n\r\n",
                    limits: HTTPLimits(maxRequestLineBytes: 22), error: .requestLineTooLong),
        DecoderCase("request line that never ends", "GET /" + String(repeating: "a", count: 100),
                    limits: HTTPLimits(maxRequestLineBytes: 64), error: .requestLineTooLong),
        // Found by the fuzzer: the limit is judged before the terminator, whatever the split.
        DecoderCase("request line too long, ended by a bare LF", "GET /" + String(repeating: "a", count: 100) + "\n",
                    limits: HTTPLimits(maxRequestLineBytes: 64), error: .requestLineTooLong),
        DecoderCase("head too large, ended by a bare LF", "GET / HTTP/1.1\r\nX: \(String(repeating: "v", count: 300))\n",
                    limits: HTTPLimits(maxHeaderBytes: 256), error: .headersTooLarge),
        DecoderCase("oversized head (431)", "GET / HTTP/1.1\r\n\(host)X: \(String(repeating: "v", count: 300))\r\n\r\n",
                    limits: HTTPLimits(maxHeaderBytes: 256), error: .headersTooLarge),
        DecoderCase("head one byte too large", "GET /23456789 HTTP/1.1\r\nHost: a\r\nB: 1\r\n\r\n",
                    limits: HTTPLimits(maxHeaderBytes: 40), error: .headersTooLarge),
        DecoderCase("head that never ends", "GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: 60),
                    limits: HTTPLimits(maxHeaderBytes: 256), error: .headersTooLarge),
        DecoderCase("request line longer than the head limit", "GET /\(String(repeating: "a", count: 100)) HTTP/1.1\r\n",
                    limits: HTTPLimits(maxRequestLineBytes: 200, maxHeaderBytes: 50), error: .headersTooLarge),
        DecoderCase("too many headers (431)", "GET / HTTP/1.1\r\n\(host)" + String(repeating: "X: y\r\n", count: 10) + "\r\n",
                    limits: HTTPLimits(maxHeaderCount: 10), error: .tooManyHeaders),

        // Chunked bodies.
        DecoderCase("chunk size overflow", chunked("ffffffffffffffffff\r\n"), brokenChunked(), error: .badChunkSize),
        DecoderCase("chunk size of 17 digits", chunked("00000000000000001\r\nx\r\n0\r\n\r\n"), brokenChunked(), error: .badChunkSize),
        DecoderCase("negative chunk size", chunked("-1\r\n"), brokenChunked(), error: .badChunkSize),
        DecoderCase("chunk size 0x10", chunked("0x10\r\n"), brokenChunked(), error: .badChunkSize),
        DecoderCase("empty chunk size", chunked("\r\nabc\r\n"), brokenChunked(), error: .badChunkSize),
        DecoderCase("chunk size followed by whitespace only", chunked("5 \r\nhello\r\n0\r\n\r\n"), brokenChunked(), error: .badChunkSize),
        DecoderCase("chunk size with inner space", chunked("1 0\r\n"), brokenChunked(), error: .badChunkSize),
        DecoderCase("chunk size ended by bare LF", chunked("5\nhello\r\n"), brokenChunked(), error: .badChunkSize),
        DecoderCase("chunk size CR without LF", chunked("5\rhello\r\n"), brokenChunked(), error: .badChunkFraming),
        DecoderCase("chunk data not followed by CRLF", chunked("5\r\nhelloX\r\n0\r\n\r\n"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .chunked, body: "hello", complete: false)],
                    error: .badChunkFraming),
        DecoderCase("chunk data followed by bare LF", chunked("5\r\nhello\n0\r\n\r\n"),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .chunked, body: "hello", complete: false)],
                    error: .badChunkFraming),
        DecoderCase("chunk extension with a control byte", chunked("5;a=\u{1}\r\nhello\r\n0\r\n\r\n"), brokenChunked(), error: .invalidChunkExtension),
        DecoderCase("chunk extension with bare LF", chunked("5;a\nhello\r\n0\r\n\r\n"), brokenChunked(), error: .invalidChunkExtension),
        DecoderCase("chunk extensions over the per-body budget", chunked("1;" + String(repeating: "e", count: 20) + "\r\nx\r\n0;" + String(repeating: "e", count: 20) + "\r\n\r\n"),
                    limits: HTTPLimits(maxChunkExtensionBytes: 40),
                    [ExpectedRequest(method: "POST", target: "/p", framing: .chunked, body: "x", complete: false)],
                    error: .invalidChunkExtension),
        DecoderCase("trailer with obs-fold", chunked("0\r\nA: 1\r\n 2\r\n\r\n"), brokenChunked(), error: .obsFold),
        DecoderCase("trailer with NUL", chunked("0\r\nA: \u{0}\r\n\r\n"), brokenChunked(), error: .invalidFieldValue),
        DecoderCase("trailer with bare LF", chunked("0\r\nA: 1\n\r\n"), brokenChunked(), error: .invalidLineEnding),
        DecoderCase("too many trailers", chunked("0\r\n" + String(repeating: "T: 1\r\n", count: 4) + "\r\n"),
                    limits: HTTPLimits(maxHeaderCount: 3), brokenChunked(), error: .tooManyHeaders),
    ]

    static let all = valid + hostile
}
