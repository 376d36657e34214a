import LatchkeyHTTP
import Testing

/// Which requests ask to switch protocols (RFC 9110 §7.8).
struct RequestedUpgradeTests {
    private func upgrade(_ fields: HTTPFields, version: HTTPVersion = .http1_1) -> RequestedUpgrade? {
        RequestHead(method: "GET", target: "/chat", version: version, fields: fields).requestedUpgrade
    }

    @Test func aWebSocketHandshake() {
        #expect(upgrade(["Host": "a", "Connection": "keep-alive, Upgrade", "Upgrade": "websocket"])
            == RequestedUpgrade(protocolName: "websocket", value: "websocket"))
    }

    @Test func theFirstOfferedProtocolWithoutItsVersion() {
        #expect(upgrade(["Connection": "upgrade", "Upgrade": "Foo/2, websocket"])?.protocolName == "foo")
        #expect(upgrade(["Connection": "upgrade", "Upgrade": "Foo/2, websocket"])?.value == "Foo/2, websocket")
    }

    @Test func upgradeWithoutConnectionOrInHTTP10IsNone() {
        #expect(upgrade(["Upgrade": "websocket"]) == nil)
        #expect(upgrade(["Connection": "keep-alive", "Upgrade": "websocket"]) == nil)
        #expect(upgrade(["Connection": "upgrade"]) == nil)
        #expect(upgrade(["Connection": "upgrade", "Upgrade": "websocket"], version: .http1_0) == nil)
        #expect(upgrade(["Connection": "upgrade", "Upgrade": " , "]) == nil)
    }
}

/// The decoder finds the wish to upgrade while it reads the fields, as a head made by hand
/// judges it from them.
struct DecodedUpgradeTests {
    private func decoded(_ head: String) -> RequestHead? {
        var decoder = RequestDecoder()
        let step = Array(head.utf8).withUnsafeBytes { decoder.decode($0) }
        if case .head(let head) = step.event { return head }
        return nil
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: a\r\nupgrade: websocket\r\nCONNECTION: UPGRADE\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n", false),
    ])
    func asksUpgradeAsAHeadMadeByHandWould(_ wire: String, _ asks: Bool) throws {
        let head = try #require(decoded(wire))
        #expect(head.asksUpgrade == asks)
        let byHand = RequestHead(method: head.method, target: head.target, version: head.version, fields: head.fields)
        #expect(byHand.asksUpgrade == asks)
    }
}
