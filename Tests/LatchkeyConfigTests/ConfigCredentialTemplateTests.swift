import Testing
@testable import LatchkeyConfig

@Suite("Credential templates")
struct ConfigCredentialTemplateTests {
    @Test(arguments: [
        ("{token}", "", ""),
        ("Bearer {token}", "Bearer ", ""),
        ("OAuth2 {access_token}", "OAuth2 ", ""),
        ("key={token};", "key=", ";"),
        ("{{literal}} {token} }}", "{literal} ", " }"),
    ])
    func parses(_ text: String, _ prefix: String, _ suffix: String) throws {
        let template = try CredentialTemplate(parsing: text)
        #expect(template.prefix == prefix)
        #expect(template.suffix == suffix)
    }

    @Test(arguments: [
        ("Bearer abc", "no {token} placeholder"),
        ("", "no {token} placeholder"),
        ("{token}{token}", "more than one placeholder"),
        ("{token} {access_token}", "more than one placeholder"),
        ("{user} {token}", "unknown placeholder"),
        ("{tokn}", "unknown placeholder; did you mean {token}?"),
        ("Bearer {token", "unclosed '{'"),
        ("Bearer } {token}", "unmatched '}'"),
    ])
    func refuses(_ text: String, _ message: String) {
        #expect(throws: CredentialTemplate.ParseError(message)) {
            try CredentialTemplate(parsing: text)
        }
    }

    @Test func rendersAroundTheToken() throws {
        let template = try CredentialTemplate(parsing: "Bearer {token}!")
        #expect(template.render(token: "abc") == "Bearer abc!")
        #expect(CredentialTemplate.token.render(token: "abc") == "abc")
        var bytes: [UInt8] = Array("X: ".utf8)
        template.render(token: Array("abc".utf8), into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "X: Bearer abc!")
    }

    @Test func descriptionRoundTrips() throws {
        for text in ["Bearer {token}", "{{x}} {token}", "{token}"] {
            let template = try CredentialTemplate(parsing: text)
            #expect(try CredentialTemplate(parsing: template.description) == template)
        }
        #expect(try CredentialTemplate(parsing: "OAuth2 {access_token}").description == "OAuth2 {token}")
    }

    @Test func errorsNeverQuoteTheText() {
        do {
            _ = try CredentialTemplate(parsing: "Bearer ghp_secretvalue1234567890")
            Issue.record("expected an error")
        } catch {
            #expect(!error.description.contains("ghp_"))
        }
    }
}
