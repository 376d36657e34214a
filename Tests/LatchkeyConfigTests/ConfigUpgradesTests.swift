import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// `routes[].upgrades`, `routes[].unlisted_upgrades` and `limits.upgrade_idle_timeout`.
@Suite("Config upgrades")
struct ConfigUpgradesTests {
    private func route(_ keys: String) -> String {
        """
        routes:
          - name: live
            upstream: https://live.example.com
        \(keys.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
        """
    }

    @Test func webSocketIsForwardedByDefaultAndOthersRefused() throws {
        let config = try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes)
        #expect(config.routes[0].upgrades == UpgradeSettings(protocols: ["websocket"], unlisted: .refuse))
        #expect(config.limits.upgradeIdleTimeout == nil)
    }

    @Test func protocolsAreLowerCasedOnceAndUnlistedMayBePlain() throws {
        let config = try ConfigTestSupport.load(route("upgrades: [WebSocket, websocket, mqtt]\nunlisted_upgrades: plain")
            + "\nlimits: { upgrade_idle_timeout: 1h }\n")
        #expect(config.routes[0].upgrades == UpgradeSettings(protocols: ["websocket", "mqtt"], unlisted: .plain))
        #expect(config.limits.upgradeIdleTimeout == .seconds(3600))
        #expect(try ConfigTestSupport.load(route("upgrades: []")).routes[0].upgrades.protocols.isEmpty)
    }

    @Test(arguments: [
        ("upgrades: [h2c]", "routes[0].upgrades[0]", "h2c is HTTP/2 in clear text, not a protocol to relay"),
        ("upgrades: [\"web socket\"]", "routes[0].upgrades[0]", "invalid protocol name"),
        ("unlisted_upgrades: strip", "routes[0].unlisted_upgrades", "unknown value"),
    ])
    func problemsAreReportedAtTheirKey(_ keys: String, _ path: String, _ message: String) {
        let problems = ConfigTestSupport.problems(route(keys))
        #expect(problems.map(\.path) == [path])
        #expect(problems.first?.message == message)
    }
}
