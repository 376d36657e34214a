import Foundation
import Testing
@testable import LatchkeyConfig

/// The pieces a recipe is made of: JSON paths, templates, JSON values and field matches.
@Suite("Recipe model")
struct RecipeModelTests {
    @Test(arguments: [
        ("session_id", [JSONPath.Component.key("session_id")]),
        ("data.token", [.key("data"), .key("token")]),
        ("items[0].id", [.key("items"), .index(0), .key("id")]),
        ("$.x", [.key("x")]),
        ("$.a[2][3]", [.key("a"), .index(2), .index(3)]),
        ("[1].name", [.index(1), .key("name")]),
        ("status-code", [.key("status-code")]),
    ])
    func parsesJSONPaths(_ text: String, _ components: [JSONPath.Component]) throws {
        let path = try JSONPath(parsing: text)
        #expect(path.components == components)
        #expect(try JSONPath(parsing: path.description) == path)
    }

    @Test(arguments: [
        ("", "empty"),
        ("$.", "empty"),
        ("a.", "ends with a dot"),
        ("a..b", "an empty name between dots"),
        (".a", "an empty name between dots"),
        ("items[x]", "an index must be written [N] with N a whole number"),
        ("items[-1]", "an index must be written [N] with N a whole number"),
        ("items[0", "an index must be written [N] with N a whole number"),
    ])
    func refusesBadJSONPaths(_ text: String, _ message: String) {
        #expect(throws: JSONPath.ParseError(description: message)) { try JSONPath(parsing: text) }
    }

    @Test func parsesTemplatesOfEveryKind() throws {
        let template = try RecipeTemplate(parsing: "a={request_token}&k={credentials.tmdb-key}&p={secrets.password}&o={prompts.otp}")
        #expect(template.parts == [
            .literal("a="), .capture("request_token"), .literal("&k="), .credential("tmdb-key"),
            .literal("&p="), .secret("password"), .literal("&o="), .prompt("otp"),
        ])
        #expect(try RecipeTemplate(parsing: template.description) == template)
    }

    @Test func templateBracesAndPlainText() throws {
        #expect(try RecipeTemplate(parsing: "{{\"id\": {id}}}").parts == [.literal("{\"id\": "), .capture("id"), .literal("}")])
        #expect(try RecipeTemplate(parsing: "{{x}}").description == "{{x}}")
        #expect(try RecipeTemplate(parsing: "plain").parts == [.literal("plain")])
        #expect(try RecipeTemplate(parsing: "").parts == [])
    }

    @Test(arguments: [
        ("{x", "unclosed '{'"),
        ("x}", "unmatched '}'"),
        ("{}", "invalid placeholder name"),
        ("{a b}", "invalid placeholder name"),
        ("{secrets.}", "invalid placeholder name"),
        ("{secrets.a.b}", "invalid placeholder name"),
        ("{env.HOME}", "unknown placeholder kind; use {CAPTURE}, {credentials.NAME}, {secrets.NAME} or {prompts.NAME}"),
    ])
    func refusesBadTemplates(_ text: String, _ message: String) {
        #expect(throws: CredentialTemplate.ParseError(message)) { try RecipeTemplate(parsing: text) }
    }

    @Test func jsonValuesDecodeAndAnswerPaths() throws {
        let document = try JSONDecoder().decode(JSONValue.self, from: Data("""
            {"success": true, "session_id": "s1", "expires_in": 3600, "ratio": 1.5, "none": null,
             "items": [{"id": 7}, {"id": "eight"}]}
            """.utf8))
        #expect(document[try JSONPath(parsing: "success")] == .bool(true))
        #expect(document[try JSONPath(parsing: "items[1].id")] == .string("eight"))
        #expect(document[try JSONPath(parsing: "items[2].id")] == nil)
        #expect(document[try JSONPath(parsing: "success.x")] == nil)
        #expect(document[try JSONPath(parsing: "none")] == .null)
        #expect(document[try JSONPath(parsing: "session_id")]?.scalarText == "s1")
        #expect(document[try JSONPath(parsing: "expires_in")]?.scalarText == "3600")
        #expect(document[try JSONPath(parsing: "ratio")]?.scalarText == "1.5")
        #expect(document[try JSONPath(parsing: "success")]?.scalarText == "true")
        #expect(document[try JSONPath(parsing: "none")]?.scalarText == nil)
        #expect(document[try JSONPath(parsing: "items")]?.scalarText == nil)
    }

    /// Ids past 2^53 (Twitter-style) keep every digit; large whole Doubles are written
    /// without an exponent while they are exact.
    @Test func largeWholeNumbersKeepTheirDigits() throws {
        let document = try JSONDecoder().decode(JSONValue.self, from: Data(
            #"{"id": 12345678901234567, "big": 1234567890123456, "max": 9223372036854775807, "huge": 1e300}"#.utf8))
        #expect(document[try JSONPath(parsing: "id")]?.scalarText == "12345678901234567")
        #expect(document[try JSONPath(parsing: "big")]?.scalarText == "1234567890123456")
        #expect(document[try JSONPath(parsing: "max")]?.scalarText == "9223372036854775807")
        #expect(document[try JSONPath(parsing: "huge")]?.scalarText == "1e+300")
        #expect(JSONValue.number(1234567890123456).scalarText == "1234567890123456")
        #expect(JSONValue.integer(3) == .number(3) && JSONValue.number(3) == .integer(3) && JSONValue.integer(3) != .number(3.5))
    }

    @Test func fieldMatchesCompareNumbersAsNumbers() throws {
        let document = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"status_code": 3.0, "success": false}"#.utf8))
        #expect(JSONFieldMatch(path: try JSONPath(parsing: "status_code"), value: .number(3)).holds(in: document))
        #expect(!JSONFieldMatch(path: try JSONPath(parsing: "status_code"), value: .number(7)).holds(in: document))
        #expect(!JSONFieldMatch(path: try JSONPath(parsing: "status_code"), value: .string("3")).holds(in: document))
        #expect(!JSONFieldMatch(path: try JSONPath(parsing: "success"), value: .bool(true)).holds(in: document))
        #expect(!JSONFieldMatch(path: try JSONPath(parsing: "missing"), value: .null).holds(in: document))
    }
}
