#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer

/// A request that switches protocols through a route: what the handshake asks for.
struct UpgradePlan: Equatable {
    /// The client's `Upgrade` field, sent on the handshake.
    let offer: String
    /// RFC 6455: the stream is closed with close frames at shutdown.
    let webSocket: Bool

    enum Verdict {
        /// Not an upgrade, or one the route forwards as a plain request (`unlisted_upgrades:
        /// plain`, which strips it with the other hop-by-hop fields).
        case plain
        case upgrade(UpgradePlan)
        case refuse(ErrorDocument)
    }

    /// What `head` asks of `route`, checked as RFC 6455 §4.1 and §4.2.1 say a WebSocket
    /// opening handshake must be: a GET without a body, with one `Sec-WebSocket-Key` that is
    /// the base64 of 16 bytes, and one `Sec-WebSocket-Version`. Any upgrade has no body.
    static func judge(_ head: RequestHead, on route: Route) -> Verdict {
        guard let requested = head.requestedUpgrade else { return .plain }
        guard route.upgrades.protocols.contains(requested.protocolName) else {
            guard route.upgrades.unlisted == .refuse else { return .plain }
            return .refuse(ErrorDocument(status: 400, error: "upgrade_not_allowed",
                                         message: "the route does not switch to \(requested.protocolName); its upgrades: list names the protocols it does",
                                         route: route.name))
        }
        guard head.framing == .none else { return refusal("an upgrade request carries no body", route) }
        let webSocket = requested.protocolName == UpgradeSettings.webSocket
        if webSocket {
            guard head.method == "GET" else { return refusal("a WebSocket handshake is a GET", route) }
            let keys = head.fields.values(named: "Sec-WebSocket-Key")
            guard keys.count == 1, let key = Data(base64Encoded: keys[0].trimmingSpaces().description), key.count == 16 else {
                return refusal("a WebSocket handshake needs one Sec-WebSocket-Key, the base64 of 16 bytes", route)
            }
            guard head.fields.values(named: "Sec-WebSocket-Version").count == 1 else {
                return refusal("a WebSocket handshake needs one Sec-WebSocket-Version", route)
            }
        }
        return .upgrade(UpgradePlan(offer: requested.value, webSocket: webSocket))
    }

    private static func refusal(_ message: String, _ route: Route) -> Verdict {
        .refuse(ErrorDocument(status: 400, error: "bad_request", message: message, route: route.name))
    }
}
