import LatchkeyConfig
import LatchkeyHTTP
import Testing
@testable import Latchkey

/// Which requests a route switches, and the WebSocket handshakes it refuses (RFC 6455 §4.1).
struct UpgradePlanTests {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    private func route(_ upgrades: UpgradeSettings = .init()) -> Route {
        Route(RouteConfig(name: "live", upstream: UpstreamConfig(url: "http://up.example"), upgrades: upgrades), index: 0,
              listenerIndex: [:], identities: [:])!
    }

    private func head(_ fields: HTTPFields, method: String = "GET", framing: BodyFraming = .none) -> RequestHead {
        var all: HTTPFields = ["Host": "a"]
        for field in fields { all.append(field) }
        return RequestHead(method: method, target: "/live", fields: all, framing: framing)
    }

    private static let webSocket: HTTPFields = ["Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Key": key,
                                                "Sec-WebSocket-Version": "13"]

    private func verdict(_ head: RequestHead, _ route: Route) -> String {
        switch UpgradePlan.judge(head, on: route) {
        case .plain: "plain"
        case .upgrade(let plan): "upgrade \(plan.offer) webSocket=\(plan.webSocket)"
        case .refuse(let document): "\(document.status) \(document.error)"
        }
    }

    @Test func aWebSocketHandshakeIsUpgraded() {
        #expect(verdict(head(Self.webSocket), route()) == "upgrade websocket webSocket=true")
    }

    @Test func aRequestWithoutUpgradeIsPlain() {
        #expect(verdict(head(["Upgrade": "websocket"]), route()) == "plain")
    }

    @Test(arguments: [
        ("Sec-WebSocket-Key", nil), ("Sec-WebSocket-Key", "short"), ("Sec-WebSocket-Version", nil),
    ] as [(String, String?)])
    func aHandshakeWithoutItsKeyOrVersionIsRefused(_ name: String, _ value: String?) {
        var fields = Self.webSocket
        fields.removeAll(named: HTTPField.Name(name))
        if let value { fields.append(name: name, value: value) }
        #expect(verdict(head(fields), route()) == "400 bad_request")
    }

    @Test func aHandshakeIsAGetWithoutBody() {
        #expect(verdict(head(Self.webSocket, method: "POST"), route()) == "400 bad_request")
        #expect(verdict(head(Self.webSocket, framing: .length(3)), route()) == "400 bad_request")
    }

    @Test func anUnlistedProtocolIsRefusedOrForwardedPlain() {
        let foo: HTTPFields = ["Connection": "upgrade", "Upgrade": "foo/1"]
        #expect(verdict(head(foo), route()) == "400 upgrade_not_allowed")
        #expect(verdict(head(foo), route(UpgradeSettings(unlisted: .plain))) == "plain")
        #expect(verdict(head(foo), route(UpgradeSettings(protocols: ["foo"]))) == "upgrade foo/1 webSocket=false")
        #expect(verdict(head(Self.webSocket), route(UpgradeSettings(protocols: []))) == "400 upgrade_not_allowed")
    }
}
