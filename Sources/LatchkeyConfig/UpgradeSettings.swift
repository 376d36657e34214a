/// What a route does with a request that asks to switch protocols (`Connection: Upgrade`
/// with `Upgrade: TOKEN`, RFC 9110 §7.8).
public struct UpgradeSettings: Sendable, Equatable {
    /// `upgrades:`: the protocol names (lower-cased, without version) forwarded as
    /// upgrades, with the route's credentials on the handshake. WebSocket by default.
    public var protocols: [String]
    /// `unlisted_upgrades:`: a request for another protocol.
    public var unlisted: Unlisted

    public enum Unlisted: String, Sendable, Equatable, CaseIterable {
        /// Answered 400 `upgrade_not_allowed`.
        case refuse
        /// Forwarded as a plain request, without the upgrade.
        case plain
    }

    public static let webSocket = "websocket"

    public init(protocols: [String] = [Self.webSocket], unlisted: Unlisted = .refuse) {
        self.protocols = protocols
        self.unlisted = unlisted
    }
}
