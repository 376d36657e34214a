import Foundation
import Logging
import Testing
@testable import LatchkeyLogging

@Suite struct LogLineTests {
    @Test func jsonLinesParseAsJSON() throws {
        let bytes = LogLine.format(.json, level: .info, label: "latchkey.access", message: "request \"quoted\"",
                                   metadata: ["status": .stringConvertible(200), "path": .string("/a\nb"), "list": .array([.string("x")])],
                                   timestamp: "2026-01-01T00:00:00.000Z")
        let line = String(decoding: bytes, as: UTF8.self)
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        #expect(object?["status"] as? Int == 200)
        #expect(object?["path"] as? String == "/a\nb")
        #expect(object?["message"] as? String == "request \"quoted\"")
        #expect(line.hasSuffix("}\n"))
    }

    @Test func textLinesQuoteValuesWithSpaces() {
        let line = String(decoding: LogLine.format(.text, level: .warning, label: "latchkey", message: "upstream failed",
                                                   metadata: ["detail": .string("Connection refused"), "route": .string("api")],
                                                   timestamp: "T"), as: UTF8.self)
        #expect(line == "T WARNING [latchkey] upstream failed detail=\"Connection refused\" route=api\n")
    }

    @Test func accessFieldsKeepTheirOrderAndNumbersStayNumbers() {
        let line = String(decoding: LogLine.format(.text, level: .info, label: "latchkey.access", message: "request",
                                                   fields: [("status", .integer(200)), ("duration_ms", LogValue(milliseconds: .microseconds(12_345))),
                                                            ("bytes", .integer(-1))],
                                                   timestamp: "T"), as: UTF8.self)
        #expect(line == "T INFO [latchkey.access] request status=200 duration_ms=12.3 bytes=-1\n")
    }

    @Test func secretsAreMaskedEverywhereInTheLine() {
        var line = Array("a tok tok b toktok".utf8)
        LogRedaction.mask(Array("tok".utf8), in: &line)
        #expect(String(decoding: line, as: UTF8.self) == "a [REDACTED] [REDACTED] b [REDACTED][REDACTED]")
    }

    @Test func timestampIsRFC3339() {
        let stamp = LogLine.timestamp()
        #expect(stamp.count == 24)
        #expect(stamp.hasSuffix("Z"))
    }
}
