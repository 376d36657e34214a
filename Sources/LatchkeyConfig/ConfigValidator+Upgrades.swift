extension ConfigValidator {
    static let upgradesExpectation = "protocol names such as [websocket] (the Upgrade header's tokens, without version); [] for none"

    /// `routes[].upgrades` and `routes[].unlisted_upgrades`.
    mutating func validateUpgrades(_ route: ConfigMapping) -> UpgradeSettings {
        var settings = UpgradeSettings()
        if let nodes = route.list("upgrades") {
            settings.protocols = []
            for (index, node) in nodes.enumerated() {
                guard let name = node.string() else { continue }
                // RFC 9110 §7.8: protocol-name is a token; h2c is HTTP/2, which libcurl speaks
                // itself (http2: true), never a stream Latchkey should relay blind.
                if !ConfigSyntax.isToken(name) {
                    diagnostics.error((route.path / "upgrades")[index], "invalid protocol name", expected: Self.upgradesExpectation)
                } else if name.lowercased() == "h2c" {
                    diagnostics.error((route.path / "upgrades")[index], "h2c is HTTP/2 in clear text, not a protocol to relay",
                                      expected: "http2: true on the upstream for an HTTP/2 upstream")
                } else if !settings.protocols.contains(name.lowercased()) {
                    settings.protocols.append(name.lowercased())
                }
            }
        }
        if let text = route.string("unlisted_upgrades") {
            if let unlisted = UpgradeSettings.Unlisted(rawValue: text) {
                settings.unlisted = unlisted
            } else {
                diagnostics.error(route.path / "unlisted_upgrades", "unknown value",
                                  expected: "refuse (answer 400, the default) or plain (forward without the upgrade)")
            }
        }
        return settings
    }
}
