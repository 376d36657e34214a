import LatchkeyHTTP
import Testing

@Suite struct HTTPStatusTests {
    @Test func reasonPhrases() {
        #expect(HTTPStatus.reasonPhrase(200) == "OK")
        #expect(HTTPStatus.reasonPhrase(401) == "Unauthorized")
        #expect(HTTPStatus.reasonPhrase(413) == "Content Too Large")
        #expect(HTTPStatus.reasonPhrase(431) == "Request Header Fields Too Large")
        #expect(HTTPStatus.reasonPhrase(502) == "Bad Gateway")
        #expect(HTTPStatus.reasonPhrase(799) == "")
    }
}
