@testable import LatchkeyHTTP
import Testing

/// `HTTPFields` as stored lines with an index: what a parsed head forwards, how names are
/// recognised, and that edits neither reorder fields nor let the bytes grow unbounded.
@Suite struct HTTPFieldsStorageTests {
    private static func responseFields(_ head: String) -> HTTPFields? {
        var decoder = ResponseDecoder(requestMethod: "GET")
        let wire = Array(("HTTP/1.1 200 OK\r\n" + head + "\r\n").utf8)
        guard case .head(let parsed) = wire.withUnsafeBytes({ decoder.decode($0) }).event else { return nil }
        return parsed.fields
    }

    private static func requestFields(_ head: String) -> HTTPFields? {
        var decoder = RequestDecoder()
        let wire = Array(("GET / HTTP/1.1\r\n" + head + "\r\n").utf8)
        guard case .head(let parsed) = wire.withUnsafeBytes({ decoder.decode($0) }).event else { return nil }
        return parsed.fields
    }

    private static func encoded(_ fields: HTTPFields) -> String {
        var buffer: [UInt8] = []
        FieldSectionEncoder.append(fields, to: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    @Test func aParsedSectionIsForwardedAsItCame() throws {
        let head = "Host: a\r\nX-Trace: 1 2  3\r\nset-COOKIE: k=v\r\nAccept: */*\r\n"
        let fields = try #require(Self.requestFields(head))
        #expect(Self.encoded(fields) == head + "\r\n")
        #expect(fields.entries.allSatisfy { $0.sendsAsStored })
    }

    @Test func otherSpacingIsWrittenAnew() throws {
        let fields = try #require(Self.responseFields("A:1\r\nB:   2  \r\nC : 3\r\nD: 4\r\nE:\r\n"))
        #expect(Self.encoded(fields) == "A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: \r\n\r\n")
        #expect(fields.map(\.value) == ["1", "2", "3", "4", ""])
    }

    @Test func aResponseHeadWithBareLFsIsForwardedWithCRLFs() throws {
        var decoder = ResponseDecoder(requestMethod: "GET")
        let wire = Array("HTTP/1.1 200 OK\nDate: d\nX-Trace:  1 2 \r\nServer: s\n\n".utf8)
        guard case .head(let head) = wire.withUnsafeBytes({ decoder.decode($0) }).event else {
            Issue.record("a head")
            return
        }
        #expect(head.fields == ["Date": "d", "X-Trace": "1 2", "Server": "s"])
        #expect(Self.encoded(head.fields) == "Date: d\r\nX-Trace: 1 2\r\nServer: s\r\n\r\n")
    }

    @Test func anUpstreamsLatin1BytesAreForwardedAndRepairedForReaders() throws {
        var decoder = ResponseDecoder(requestMethod: "GET")
        let wire: [UInt8] = Array("HTTP/1.1 200 OK\r\nX-Name: caf".utf8) + [0xE9] + Array("\r\n\r\n".utf8)
        guard case .head(let head) = wire.withUnsafeBytes({ decoder.decode($0) }).event else {
            Issue.record("a head")
            return
        }
        var buffer: [UInt8] = []
        FieldSectionEncoder.append(head.fields, to: &buffer)
        #expect(buffer == Array("X-Name: caf".utf8) + [0xE9] + Array("\r\n\r\n".utf8))
        #expect(head.fields["X-Name"] == "caf\u{FFFD}")
    }

    @Test func editsLeaveTheOtherLinesInOneRun() throws {
        var fields = try #require(Self.responseFields("Date: d\r\nConnection: keep-alive\r\nContent-Length: 5\r\nServer: s\r\n"))
        fields.removeHopByHop()
        fields.set(name: .contentLength, value: "6")
        fields.append(name: "Via", value: "1.1 latchkey")
        #expect(Self.encoded(fields) == "Date: d\r\nContent-Length: 6\r\nServer: s\r\nVia: 1.1 latchkey\r\n\r\n")
    }

    @Test func knownAndOtherNamesAreFoundInAnyCase() {
        var fields = HTTPFields()
        fields.append(name: "content-LENGTH", value: "1")
        fields.append(name: "X-Forwarded-Forx", value: "2")
        fields.append(name: "Hosts", value: "3")
        fields.append(name: "x-request-id", value: "4")
        #expect(fields[.contentLength] == "1")
        #expect(fields["CONTENT-length"] == "1")
        #expect(fields[.xForwardedFor] == nil)
        #expect(fields["x-forwarded-forX"] == "2")
        #expect(fields[.host] == nil)
        #expect(fields["HOSTS"] == "3")
        #expect(fields["X-Request-ID"] == "4")
        #expect(fields["X-Request-IE"] == nil)
        #expect(fields.entries.map(\.name) == [.contentLength, .other, .other, .other])
    }

    @Test func namesCompareAsFieldNamesDo() {
        #expect(HTTPField.Name("HOST") == .host)
        #expect(HTTPField.Name("x-a") == HTTPField.Name("X-A"))
        #expect(HTTPField.Name("x-a") != HTTPField.Name("x-b"))
        #expect(Set<HTTPField.Name>(["X-A", "x-a", "Host", "host"]).count == 2)
    }

    @Test(arguments: [
        ("100", UInt64(100), "100", true), ("0", 0, "0", true), ("0100", 100, "100", false), ("100", 101, "101", false),
        ("+100", 100, "100", false), ("18446744073709551615", .max, "18446744073709551615", true),
        ("18446744073709551616", 0, "0", false), ("99999999999999999999999", 7, "7", false),
    ])
    func setContentLengthKeepsOnlyTheCanonicalLine(sent: String, length: UInt64, written: String, untouched: Bool) {
        let fields: HTTPFields = ["Date": "d", "Content-Length": sent, "Server": "s"]
        var edited = fields
        edited.setContentLength(length)
        #expect(edited == ["Date": "d", "Content-Length": written, "Server": "s"])
        #expect((edited.storage === fields.storage) == untouched)
    }

    @Test func setContentLengthMakesRepeatedLinesOne() {
        var fields: HTTPFields = ["Content-Length": "5", "X": "1", "content-length": "5"]
        fields.setContentLength(5)
        #expect(fields == ["Content-Length": "5", "X": "1"])
    }

    @Test func setKeepsTheFirstPlaceAndDropsTheRest() {
        var fields: HTTPFields = ["A": "1", "X-Dup": "a", "B": "2", "x-dup": "b", "C": "3", "X-DUP": "c"]
        fields.set(name: "X-Dup", value: "z")
        #expect(fields == ["A": "1", "X-Dup": "z", "B": "2", "C": "3"])
        fields.set(name: .cookie, value: "k=v")
        #expect(fields.last == HTTPField(name: "Cookie", value: "k=v"))
    }

    @Test func aStringWithControlBytesIsGuardedWhenEncoded() {
        var fields = HTTPFields()
        fields.append(name: "X-Split", value: "a\r\nInjected: 1")
        fields.append(name: "Bad Name", value: "v")
        fields.append(name: "Tab", value: "a\tb")
        #expect(Self.encoded(fields) == "X-Split: a  Injected: 1\r\nTab: a\tb\r\n\r\n")
        #expect(fields["X-Split"] == "a\r\nInjected: 1")
    }

    @Test func editingOverAndOverKeepsTheBytesBounded() {
        var fields: HTTPFields = ["Host": "a", "Accept": "*/*"]
        for round in 0..<10_000 {
            fields.set(name: "X-Round", value: String(repeating: "r", count: 40) + String(round))
            fields[0].value = "host-\(round)"
        }
        #expect(fields.lineCount < 4096)
        #expect(fields == ["Host": "host-9999", "Accept": "*/*", "X-Round": String(repeating: "r", count: 40) + "9999"])
        #expect(Self.encoded(fields) == "Host: host-9999\r\nAccept: */*\r\nX-Round: \(String(repeating: "r", count: 40))9999\r\n\r\n")
    }

    /// One buffer holds a section's index and its lines; a copy shares it until either
    /// side writes, as an array's copy does.
    @Test func aCopyKeepsItsFieldsWhateverTheOriginalDoes() throws {
        let parsed = try #require(Self.responseFields("Date: d\r\nConnection: x-a\r\nX-A: 1\r\nServer: s\r\n"))
        var edited = parsed
        let copies = (0..<6).map { _ in parsed }
        edited.removeHopByHop()
        #expect(edited == ["Date": "d", "Server": "s"])
        var appended = copies[0]
        for index in 0..<100 { appended.append(name: "X-\(index)", value: String(repeating: "v", count: index)) }
        #expect(appended.count == 104)
        #expect(appended.value(at: 103) == String(repeating: "v", count: 99))
        var replaced = copies[1]
        replaced.set(name: "Server", value: "t")
        replaced[0].value = "e"
        var removed = copies[2]
        removed.removeAll(named: "X-A")
        var prepared = copies[3]
        prepared.append(PreparedFieldLine(name: "Authorization", valuePrefix: "Bearer "), filling: "token")
        var reserved = copies[4]
        reserved.reserveCapacity(64)
        reserved.append(name: "X-B", value: "2")
        for copy in copies + [parsed] {
            #expect(copy == ["Date": "d", "Connection": "x-a", "X-A": "1", "Server": "s"])
            #expect(Self.encoded(copy) == "Date: d\r\nConnection: x-a\r\nX-A: 1\r\nServer: s\r\n\r\n")
        }
        #expect(replaced == ["Date": "e", "Connection": "x-a", "X-A": "1", "Server": "t"])
        #expect(removed == ["Date": "d", "Connection": "x-a", "Server": "s"])
        #expect(prepared["Authorization"] == "Bearer token")
        #expect(reserved.count == 5)
    }

    @Test func anEmptySectionHoldsNoBuffer() {
        var fields = HTTPFields()
        #expect(fields.storage == nil)
        fields.removeAll(named: "Host")
        fields.removeHopByHop()
        #expect(fields.storage == nil)
        #expect(Self.encoded(fields) == "\r\n")
        fields.append(name: "Host", value: "a")
        #expect(Self.encoded(fields) == "Host: a\r\n\r\n")
    }

    @Test func equalFieldsHashAlikeWhateverTheirStorage() throws {
        let parsed = try #require(Self.requestFields("Host: a\r\nAccept:   */*\r\n"))
        var built: HTTPFields = ["Host": "b", "Accept": "*/*"]
        built[0].value = "a"
        #expect(parsed == built)
        #expect(parsed.hashValue == built.hashValue)
        #expect(parsed != ["host": "a", "Accept": "*/*"])
    }

    @Test func aTrailerSectionIsStoredLikeAHead() throws {
        var decoder = RequestDecoder()
        let wire = Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nChecksum: abc\r\nX-Other:1\r\n\r\n".utf8)
        var rest = wire[...]
        while !rest.isEmpty {
            let step = rest.withUnsafeBytes { decoder.decode($0) }
            if case .error = step.event {
                Issue.record("decode error")
                return
            }
            if step.event == .end { break }
            rest = rest.dropFirst(step.consumed)
        }
        #expect(decoder.trailers == ["Checksum": "abc", "X-Other": "1"])
        #expect(Self.encoded(decoder.trailers) == "Checksum: abc\r\nX-Other: 1\r\n\r\n")
    }
}

@Suite struct ASCIIWordTests {
    @Test func lowercaseWordFoldsOnlyLetters() {
        let all = (0...255).map(UInt8.init)
        for start in stride(from: 0, to: 256, by: 8) {
            let bytes = Array(all[start..<(start + 8)])
            let word = bytes.withUnsafeBytes { ASCII.loadWord($0, 0) }
            let folded = ASCII.lowercaseWord(word)
            let expected = bytes.map(ASCII.lowercase).withUnsafeBytes { ASCII.loadWord($0, 0) }
            #expect(folded == expected, "bytes \(start)…\(start + 7)")
        }
    }

    @Test(arguments: ["", "a", "aB", "Via", "Host", "Hello", "ab-Def-G", "Abcdefghi", "Content-Length", "X-Forwarded-Proto", "0123456789abcdefXYZ"])
    func caseInsensitiveEqualityMatchesTheBytewiseRule(_ text: String) {
        let upper = Array(text.uppercased().utf8)
        let lower = Array(text.lowercased().utf8)
        upper.withUnsafeBytes { u in
            lower.withUnsafeBytes { l in
                #expect(ASCII.equalsCaseInsensitive(u, l))
                #expect(ASCII.equalsCaseInsensitive(u, 0..<u.count, "") == text.isEmpty)
            }
        }
        guard !text.isEmpty else { return }
        for index in lower.indices {
            var changed = lower
            changed[index] ^= 0x01
            changed.withUnsafeBytes { c in lower.withUnsafeBytes { l in #expect(!ASCII.equalsCaseInsensitive(c, l)) } }
        }
    }
}

@Suite struct FieldNameTests {
    static let known: [(String, FieldName)] = [
        ("te", .te), ("via", .via), ("host", .host), ("cookie", .cookie), ("expect", .expect), ("upgrade", .upgrade),
        ("trailer", .trailer), ("location", .location), ("connection", .connection), ("set-cookie", .setCookie),
        ("keep-alive", .keepAlive), ("authorization", .authorization), ("content-length", .contentLength),
        ("x-forwarded-for", .xForwardedFor), ("content-location", .contentLocation), ("x-forwarded-host", .xForwardedHost),
        ("proxy-connection", .proxyConnection), ("transfer-encoding", .transferEncoding),
        ("x-forwarded-proto", .xForwardedProto), ("latchkey-identity", .latchkeyIdentity),
        ("proxy-authorization", .proxyAuthorization), ("origin", .origin), ("sec-fetch-site", .secFetchSite),
    ]

    @Test(arguments: known.map(\.0))
    func aKnownNameIsRecognisedInAnyCaseAndNothingNextToIt(_ name: String) throws {
        let expected = try #require(Self.known.first { $0.0 == name }?.1)
        for spelling in [name, name.uppercased(), String(name.enumerated().map { $0 % 2 == 0 ? Character($1.uppercased()) : $1 })] {
            #expect(HTTPField.Name(spelling) == HTTPField.Name(name))
            #expect(Array(spelling.utf8).withUnsafeBytes { FieldName.classify($0) } == expected, "\(spelling)")
        }
        var bytes = Array(name.utf8)
        for index in bytes.indices {
            let kept = bytes[index]
            bytes[index] = kept == UInt8(ascii: "-") ? UInt8(ascii: "_") : kept ^ 0x01
            #expect(bytes.withUnsafeBytes { FieldName.classify($0) } == .other)
            bytes[index] = kept
        }
        #expect(Array((name + "s").utf8).withUnsafeBytes { FieldName.classify($0) } == .other)
    }
}
