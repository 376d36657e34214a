import LatchkeyHTTP
import Testing

@Suite struct HTTPParseErrorTests {
    @Test func errorStatusesFollowTheRFCs() {
        let table: [(HTTPParseError.Code, Int)] = [
            (.requestLineTooLong, 414), (.headersTooLarge, 431), (.tooManyHeaders, 431),
            (.unsupportedTransferEncoding, 501), (.unsupportedVersion, 505),
            (.contentLengthWithTransferEncoding, 400), (.obsFold, 400), (.missingHost, 400),
            (.chunkedNotFinal, 400), (.badChunkSize, 400),
        ]
        for (code, status) in table { #expect(HTTPParseError(code).status == status, "\(code)") }
    }

    @Test func errorDescriptionsNeverQuoteTheRequest() {
        let secret = "Bearer sk-live-0123456789"
        let wire = [UInt8](wire: "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: \(secret)\u{0}\r\n\r\n")
        let transcript = DecoderDriver.whole(wire)
        #expect(transcript.error?.code == .invalidFieldValue)
        for code in HTTPParseError.Code.allCases {
            let text = HTTPParseError(code).description
            #expect(!text.isEmpty && !text.contains("sk-live"))
        }
        let fields: HTTPFields = ["Authorization": secret]
        let fieldsDescription = "\(fields)"
        #expect(fieldsDescription.contains("sk-live") == false)
    }
}
