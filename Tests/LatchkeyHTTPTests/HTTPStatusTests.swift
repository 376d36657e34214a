import LatchkeyHTTP
import Testing

@Suite struct HTTPStatusTests {
    @Test func reasonPhrases() {
        #expect(HTTPStatus.reasonPhrase(200).description == "OK")
        #expect(HTTPStatus.reasonPhrase(401).description == "Unauthorized")
        #expect(HTTPStatus.reasonPhrase(413).description == "Content Too Large")
        #expect(HTTPStatus.reasonPhrase(431).description == "Request Header Fields Too Large")
        #expect(HTTPStatus.reasonPhrase(502).description == "Bad Gateway")
        #expect(HTTPStatus.reasonPhrase(799).description == "")
    }
}
