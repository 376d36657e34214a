@testable import LatchkeyHTTP
import Testing

/// `RequestHeadWriter`: a proxy's upstream head written once from the client's lines and
/// prepared ones, byte for byte, through the encoders' last guard, whatever its size.
@Suite struct RequestHeadWriterTests {
    private static func requestFields(_ head: String) throws -> HTTPFields {
        var decoder = RequestDecoder()
        let wire = Array(("GET / HTTP/1.1\r\n" + head + "\r\n").utf8)
        guard case .head(let parsed) = wire.withUnsafeBytes({ decoder.decode($0) }).event else {
            throw HTTPParseError(.badRequestLine)
        }
        return parsed.fields
    }

    private static func text(_ head: WrittenRequestHead) -> String? {
        head.bytes.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func theClientsLinesButTheRemovedOnesThenTheAddedOnesThenTheFraming() throws {
        let client = try Self.requestFields("Host: proxy\r\nAccept: */*\r\nConnection: keep-alive\r\nX-Trace: 1 2  3\r\n")
        let bearer = PreparedFieldLine(name: .authorization, valuePrefix: "Bearer ")
        let host = PreparedFieldLine(name: .host, valuePrefix: "api.example.com")
        let head = RequestHeadWriter.write(method: "POST", target: "/v1/items?x=1", framing: .length(12)) { writer in
            writer.append(client, removing: HTTPFields.NameSet([.host, .connection]))
            writer.append(host)
            writer.append(bearer, filling: "token-1")
            writer.append(name: "Via", value: "1.1 latchkey")
        }
        #expect(Self.text(head) == "POST /v1/items?x=1 HTTP/1.1\r\nAccept: */*\r\nX-Trace: 1 2  3\r\nHost: api.example.com\r\n"
            + "Authorization: Bearer token-1\r\nVia: 1.1 latchkey\r\nContent-Length: 12\r\n\r\n")
        #expect(!head.asksToClose)
        // Read back without the framing, which the sender writes itself.
        #expect(head.fields.map(\.name) == ["Accept", "X-Trace", "Host", "Authorization", "Via"])
        #expect(head.fields[.authorization] == "Bearer token-1")
    }

    @Test(arguments: [
        (BodyFraming.none, ""),
        (.length(0), "Content-Length: 0\r\n"),
        (.chunked, "Transfer-Encoding: chunked\r\n"),
    ])
    func theFramingLine(framing: BodyFraming, line: String) {
        let head = RequestHeadWriter.write(method: "GET", target: "/", framing: framing) { writer in
            writer.append(name: "Accept", value: "*/*")
        }
        #expect(Self.text(head) == "GET / HTTP/1.1\r\nAccept: */*\r\n" + line + "\r\n")
        #expect(head.framing == framing)
        #expect(head.fields.count == 1)
    }

    @Test func aHeadLargerThanTheStackRoomComesOutWhole() throws {
        let long = String(repeating: "c", count: 5000)
        let client = try Self.requestFields("Host: h\r\nCookie: " + long + "\r\nAccept: */*\r\n")
        let head = RequestHeadWriter.write(method: "GET", target: "/" + String(repeating: "p", count: 900), framing: .none) { writer in
            writer.append(client, removing: HTTPFields.NameSet([.host]))
            writer.append(PreparedFieldLine(name: .authorization, valuePrefix: "Bearer "), filling: String(repeating: "t", count: 3000))
        }
        let text = try #require(Self.text(head))
        #expect(text == "GET /" + String(repeating: "p", count: 900) + " HTTP/1.1\r\nCookie: " + long + "\r\nAccept: */*\r\n"
            + "Authorization: Bearer " + String(repeating: "t", count: 3000) + "\r\n\r\n")
        #expect(head.fields.map(\.name) == ["Cookie", "Accept", "Authorization"])
    }

    @Test func aPieceWithLineBreaksCannotSplitTheHead() {
        let head = RequestHeadWriter.write(method: "GET", target: "/", framing: .none) { writer in
            writer.append(PreparedFieldLine(name: .authorization, valuePrefix: "Bearer "), filling: "a\r\nX-Injected: 1")
            writer.append(name: "Bad Name", value: "dropped")
        }
        #expect(Self.text(head) == "GET / HTTP/1.1\r\nAuthorization: Bearer a  X-Injected: 1\r\n\r\n")
    }

    @Test func linesWithOtherSpacingAreWrittenAnew() throws {
        let client = try Self.requestFields("Host: h\r\nA:1\r\nB:   2  \r\nC: 3\r\n")
        let head = RequestHeadWriter.write(method: "GET", target: "/", framing: .none) { writer in
            writer.append(client, removing: HTTPFields.NameSet([.host]))
        }
        #expect(Self.text(head) == "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n")
    }

    @Test func aConnectionCloseThatIsKeptIsSeen() throws {
        let client = try Self.requestFields("Host: h\r\nConnection: close\r\n")
        let kept = RequestHeadWriter.write(method: "GET", target: "/", framing: .none) { $0.append(client) }
        #expect(kept.asksToClose)
        let removed = RequestHeadWriter.write(method: "GET", target: "/", framing: .none) { writer in
            writer.append(client, removing: HTTPFields.NameSet([.host, .connection]))
        }
        #expect(!removed.asksToClose)
    }

    @Test(arguments: [("GE T", "/"), ("GET", "/a b"), ("", "/"), ("GET", "")])
    func aRequestLineThatCannotBeWrittenLeavesTheFields(method: String, target: String) {
        let head = RequestHeadWriter.write(method: method, target: target, framing: .none) { writer in
            writer.append(name: "Accept", value: "*/*")
        }
        #expect(head.bytes == nil)
        #expect(head.fields["Accept"] == "*/*")
    }
}
