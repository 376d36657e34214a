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
