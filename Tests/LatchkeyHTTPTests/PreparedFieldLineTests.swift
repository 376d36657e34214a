@testable import LatchkeyHTTP
import Testing

/// Lines prepared once and stored per message (`PreparedFieldLine`), and names removed as
/// one set (`HTTPFields.NameSet`): the same fields as the string-based calls, the same
/// guard when encoded.
@Suite struct PreparedFieldLineTests {
    private static func encoded(_ fields: HTTPFields) -> String {
        var buffer: [UInt8] = []
        FieldSectionEncoder.append(fields, to: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    @Test func aPreparedLineStoresWhatAppendWould() {
        var prepared: HTTPFields = ["Accept": "*/*"]
        var plain = prepared
        prepared.append(PreparedFieldLine(name: .authorization, valuePrefix: "Bearer ", valueSuffix: "!"), filling: "t0k")
        prepared.append(PreparedFieldLine(name: "X-Upstream", valuePrefix: "api.example.com"))
        plain.append(name: .authorization, value: "Bearer t0k!")
        plain.append(name: "X-Upstream", value: "api.example.com")
        #expect(prepared == plain)
        #expect(prepared[.authorization] == "Bearer t0k!")
        #expect(prepared.entries.map(\.name) == [.other, .authorization, .other])
        #expect(prepared.entries.allSatisfy { $0.sendsAsStored })
        #expect(Self.encoded(prepared) == "Accept: */*\r\nAuthorization: Bearer t0k!\r\nX-Upstream: api.example.com\r\n\r\n")
    }

    @Test func setKeepsTheFirstPlaceAndDropsTheRest() {
        var fields: HTTPFields = ["A": "1", "x-forwarded-proto": "ftp", "B": "2", "X-Forwarded-Proto": "gopher"]
        fields.set(PreparedFieldLine(name: .xForwardedProto, valuePrefix: "https"))
        #expect(fields == ["A": "1", "X-Forwarded-Proto": "https", "B": "2"])
        fields.set(PreparedFieldLine(name: "X-Api-Key"), filling: "k1")
        fields.set(PreparedFieldLine(name: "x-api-KEY"), filling: "k2")
        #expect(fields == ["A": "1", "X-Forwarded-Proto": "https", "B": "2", "x-api-KEY": "k2"])
    }

    @Test func aPieceWithControlBytesIsGuardedWhenEncoded() {
        var fields = HTTPFields()
        fields.append(PreparedFieldLine(name: .authorization, valuePrefix: "Bearer "), filling: "a\r\nInjected: 1")
        fields.append(PreparedFieldLine(name: "Bad Name"), filling: "v")
        fields.append(PreparedFieldLine(name: "X-Fixed", valuePrefix: "a\nb"), filling: "c")
        #expect(!fields.entries.contains { $0.sendsAsStored })
        #expect(Self.encoded(fields) == "Authorization: Bearer a  Injected: 1\r\nX-Fixed: a bc\r\n\r\n")
        #expect(fields[.authorization] == "Bearer a\r\nInjected: 1")
    }

    @Test func setOverAndOverKeepsTheBytesBounded() {
        var fields: HTTPFields = ["Host": "a"]
        let line = PreparedFieldLine(name: .xForwardedFor)
        for round in 0..<10_000 { fields.set(line, filling: String(repeating: "f", count: 40) + String(round)) }
        #expect(fields.lines.count < 4096)
        #expect(fields == ["Host": "a", "X-Forwarded-For": String(repeating: "f", count: 40) + "9999"])
    }

    @Test func aNameSetRemovesKnownAndOtherNamesInAnyCase() {
        var fields: HTTPFields = ["Host": "h", "expect": "100-continue", "X-Secret": "s", "Accept": "*/*",
                                  "CONTENT-LENGTH": "3", "x-secret": "t", "X-Secrets": "u"]
        fields.removeAll(namedIn: HTTPFields.NameSet([.contentLength, .expect, .host, "X-SECRET", "x-secret"]))
        #expect(fields == ["Accept": "*/*", "X-Secrets": "u"])
    }

    @Test func aNameSetThatMatchesNothingLeavesTheStorageShared() {
        let fields: HTTPFields = ["Accept": "*/*", "X-Other": "1"]
        var edited = fields
        edited.removeAll(namedIn: HTTPFields.NameSet([.authorization, "X-Secret"]))
        #expect(edited == fields)
        #expect(edited.entries.withUnsafeBufferPointer { $0.baseAddress }
            == fields.entries.withUnsafeBufferPointer { $0.baseAddress })
    }

    @Test func everyKnownNameHasABitOfItsOwn() {
        let names = ["te", "via", "host", "cookie", "expect", "upgrade", "trailer", "location", "connection", "set-cookie",
                     "keep-alive", "authorization", "content-length", "x-forwarded-for", "content-location",
                     "x-forwarded-host", "proxy-connection", "transfer-encoding", "x-forwarded-proto", "latchkey-identity",
                     "proxy-authorization", "origin", "sec-fetch-site"].map { HTTPField.Name($0) }
        #expect(Set(names.map { $0.known }) == Set(FieldName.allCases).subtracting([.other]))
        #expect(FieldName.allCases.allSatisfy { $0.rawValue < 32 })
        let all = HTTPFields(names.map { HTTPField(name: $0.text, value: "v") })
        for name in names {
            var fields = all
            fields.removeAll(namedIn: HTTPFields.NameSet([name]))
            #expect(fields.map { $0.name } == all.map { $0.name }.filter { $0 != name.text }, "\(name)")
        }
    }
}
