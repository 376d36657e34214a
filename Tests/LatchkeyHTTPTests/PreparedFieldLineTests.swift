@testable import LatchkeyHTTP
import Testing

/// Lines prepared once and stored per message (`PreparedFieldLine`), and names left out as
/// one set (`HTTPFields.NameSet`): the same fields as the string-based calls, the same
/// guard when encoded.
@Suite struct PreparedFieldLineTests {
    private static func encoded(_ fields: HTTPFields) -> String {
        var buffer: [UInt8] = []
        FieldSectionEncoder.append(fields, to: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The field lines, those named in `names` left out, as a written head has them.
    private static func encoded(_ fields: HTTPFields, without names: HTTPFields.NameSet) -> String {
        var buffer: [UInt8] = []
        FieldSectionEncoder.appendLines(fields, removing: names, to: &buffer)
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

    @Test func aPieceWithControlBytesIsGuardedWhenEncoded() {
        var fields = HTTPFields()
        fields.append(PreparedFieldLine(name: .authorization, valuePrefix: "Bearer "), filling: "a\r\nInjected: 1")
        fields.append(PreparedFieldLine(name: "Bad Name"), filling: "v")
        fields.append(PreparedFieldLine(name: "X-Fixed", valuePrefix: "a\nb"), filling: "c")
        #expect(!fields.entries.contains { $0.sendsAsStored })
        #expect(Self.encoded(fields) == "Authorization: Bearer a  Injected: 1\r\nX-Fixed: a bc\r\n\r\n")
        #expect(fields[.authorization] == "Bearer a\r\nInjected: 1")
    }

    @Test func aNameSetRemovesKnownAndOtherNamesInAnyCase() {
        let fields: HTTPFields = ["Host": "h", "expect": "100-continue", "X-Secret": "s", "Accept": "*/*",
                                  "CONTENT-LENGTH": "3", "x-secret": "t", "X-Secrets": "u"]
        #expect(Self.encoded(fields, without: HTTPFields.NameSet([.contentLength, .expect, .host, "X-SECRET", "x-secret"]))
            == "Accept: */*\r\nX-Secrets: u\r\n")
        #expect(fields.containsAny(of: HTTPFields.NameSet(["X-SECRETS"])))
        #expect(!fields.containsAny(of: HTTPFields.NameSet([.authorization, "X-Secret-2"])))
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
            let kept = all.filter { $0.name != name.text }.map { "\($0.name): v\r\n" }.joined()
            #expect(Self.encoded(all, without: HTTPFields.NameSet([name])) == kept, "\(name)")
        }
    }
}
