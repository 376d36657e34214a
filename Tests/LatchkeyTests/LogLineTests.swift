import Foundation
import Logging
import Testing
@testable import Latchkey

@Suite struct LogLineTests {
    @Test func jsonLinesParseAsJSON() throws {
        let line = LogLine.format(.json, level: .info, label: "latchkey.access", message: "request \"quoted\"",
                                  metadata: ["status": .stringConvertible(200), "path": .string("/a\nb"), "list": .array([.string("x")])],
                                  timestamp: "2026-01-01T00:00:00.000Z")
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["status"] as? Int == 200)
        #expect(object?["path"] as? String == "/a\nb")
        #expect(object?["message"] as? String == "request \"quoted\"")
        #expect(line.hasSuffix("}\n"))
    }

    @Test func textLinesQuoteValuesWithSpaces() {
        let line = LogLine.format(.text, level: .warning, label: "latchkey", message: "upstream failed",
                                  metadata: ["detail": .string("Connection refused"), "route": .string("api")],
                                  timestamp: "T")
        #expect(line == "T WARNING [latchkey] upstream failed detail=\"Connection refused\" route=api\n")
    }

    @Test func timestampIsRFC3339() {
        let stamp = LogLine.timestamp()
        #expect(stamp.count == 24)
        #expect(stamp.hasSuffix("Z"))
    }
}
