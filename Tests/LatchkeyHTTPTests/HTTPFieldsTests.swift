import LatchkeyHTTP
import Testing

@Suite struct HTTPFieldsTests {
    private let sample: HTTPFields = [
        "Host": "example.com", "Set-Cookie": "a=1", "accept": "*/*", "SET-COOKIE": "b=2",
    ]

    @Test func keepsOrderAndDuplicates() {
        #expect(sample.map(\.name) == ["Host", "Set-Cookie", "accept", "SET-COOKIE"])
        #expect(sample.count == 4)
        #expect(sample[1] == HTTPField(name: "Set-Cookie", value: "a=1"))
    }

    @Test func lookupIgnoresASCIICase() {
        #expect(sample["set-cookie"] == "a=1")
        #expect(sample["ACCEPT"] == "*/*")
        #expect(sample["Accept-Encoding"] == nil)
        #expect(sample.values(named: "Set-cookie") == ["a=1", "b=2"])
        #expect(sample.contains("HOST"))
        #expect(!sample.contains("Hos"))
        // Not Unicode case folding: only ASCII letters match across case.
        let fields: HTTPFields = ["Straße": "1"]
        #expect(fields["STRASSE"] == nil)
        #expect(fields["straße"] == "1")
    }

    @Test func removeAllNamed() {
        var fields = sample
        fields.removeAll(named: "set-cookie")
        #expect(fields == ["Host": "example.com", "accept": "*/*"])
    }

    @Test func setReplacesEveryLineInPlace() {
        var fields = sample
        fields.set(name: "Set-Cookie", value: "c=3")
        #expect(fields == ["Host": "example.com", "Set-Cookie": "c=3", "accept": "*/*"])
        fields.set(name: "X-New", value: "v")
        #expect(fields.last == HTTPField(name: "X-New", value: "v"))
    }

    @Test func appendAndMutateThroughTheCollection() {
        var fields = HTTPFields()
        #expect(fields.isEmpty)
        fields.append(name: "A", value: "1")
        fields.append(HTTPField(name: "B", value: "2"))
        fields[0].value = "one"
        #expect(fields == ["A": "one", "B": "2"])
    }

    @Test func removeHopByHopRemovesTheListedAndTheNamed() {
        var fields: HTTPFields = [
            "Host": "a",
            "Connection": "keep-alive, X-Secret-Hop",
            "Keep-Alive": "timeout=5",
            "Proxy-Connection": "keep-alive",
            "TE": "trailers",
            "Trailer": "Checksum",
            "Transfer-Encoding": "chunked",
            "Upgrade": "websocket",
            "x-secret-hop": "1",
            "connection": " , Other ",
            "Other": "2",
            "Authorization": "Bearer t",
            "Accept": "*/*",
        ]
        fields.removeHopByHop()
        #expect(fields == ["Host": "a", "Authorization": "Bearer t", "Accept": "*/*"])
    }

    @Test func removeHopByHopOfAKeepAliveResponseKeepsTheRestInOrder() {
        var fields: HTTPFields = ["Server": "nginx", "Connection": "Keep-Alive", "Keep-Alive": "timeout=5", "ETag": "\"x\"",
                                  "connection": "CLOSE", "Accept-Ranges": "bytes"]
        fields.removeHopByHop()
        #expect(fields == ["Server": "nginx", "ETag": "\"x\"", "Accept-Ranges": "bytes"])
    }

    @Test func aFieldNamedByALaterConnectionLineGoesToo() {
        var fields: HTTPFields = ["Connection": "keep-alive", "X-Hop": "1", "connection": "x-hop", "Y": "2"]
        fields.removeHopByHop()
        #expect(fields == ["Y": "2"])
    }

    @Test func removeHopByHopLeavesEndToEndFieldsAlone() {
        var fields: HTTPFields = ["Host": "a", "Content-Length": "3", "Trailers": "x", "Tea": "y"]
        let before = fields
        fields.removeHopByHop()
        #expect(fields == before)
    }

    @Test func descriptionShowsNamesNotValues() {
        let fields: HTTPFields = ["Authorization": "Bearer secret"]
        #expect("\(fields)" == "[Authorization]")
        #expect("\(fields[0])".contains("secret") == false)
    }
}

@Suite struct DeclaredFramingTests {
    @Test func neitherFieldIsUndeclared() {
        let fields: HTTPFields = ["Host": "h"]
        #expect(DeclaredFraming(fields) == .undeclared)
    }

    @Test func equalRepeatsAndListsAreOneLength() {
        let one: HTTPFields = ["Content-Length": "6"]
        let repeated: HTTPFields = ["Content-Length": "6", "content-length": "6, 6"]
        #expect(DeclaredFraming(one) == .length(6, canonical: true))
        #expect(DeclaredFraming(repeated) == .length(6, canonical: false))
        #expect(DeclaredFraming(repeated).contentLength == 6)
    }

    /// Canonical: the one line the server would write for the length, so it is sent as it is.
    @Test(arguments: [("0", true), ("10", true), ("010", false), ("00", false), (" 6", false), ("6, 6", false)])
    func canonicalIsOnePlainDecimal(value: String, canonical: Bool) {
        let fields: HTTPFields = ["Content-Length": value]
        guard case .length(_, let found) = DeclaredFraming(fields) else {
            Issue.record("\(value) was not read as a length")
            return
        }
        #expect(found == canonical, "\(value)")
    }

    @Test func transferEncodingWinsOverAnyLength() {
        let fields: HTTPFields = ["Content-Length": "x", "Transfer-Encoding": "chunked"]
        #expect(DeclaredFraming(fields) == .transferEncoded)
        #expect(DeclaredFraming(fields).contentLength == nil)
    }

    @Test(arguments: [["6", "60"], ["+6"], ["-1"], ["6 6"], [""], ["0x10"], ["99999999999999999999"]])
    func invalidOrConflictingLengthsAreInvalid(values: [String]) {
        var fields = HTTPFields()
        for value in values { fields.append(name: "Content-Length", value: value) }
        #expect(!DeclaredFraming(fields).isValid)
        #expect(DeclaredFraming(fields).contentLength == nil)
    }
}
