#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig

/// `GET /.latchkey/identities`: what `latchkey status --json` shows, from the running
/// server's own state, with what only it knows: a token request in flight (`refreshing`),
/// an IdP that keeps failing (`failing`, the reason and the next attempt), a logout or a
/// refused refresh it has taken up. Never a token. It names identities and routes, so the
/// handler answers it after the listener's Host and inbound checks, like the metrics.
struct IdentitiesEndpoint: Sendable {
    static let path = "/.latchkey/identities"

    private let identities: [(config: IdentityConfig, identity: Identity)]
    private let routes: [RouteConfig]
    /// The routes with a choice of identities: their current one is what `latchkey use` made it.
    private let selectable: [String: RouteIdentities]
    private let store: TokenStoreSettings.Kind

    init(config: Config, identities: [String: Identity], selectable: [String: RouteIdentities]) {
        self.identities = config.identities.sorted { $0.name < $1.name }.compactMap { config in identities[config.name].map { (config, $0) } }
        routes = config.routes
        self.selectable = selectable
        store = config.store.kind
    }

    static func serves(path: Substring) -> Bool {
        AdminResponse.isPath(path, Self.path)
    }

    func report(now: Date) -> StatusReport {
        StatusReport(
            identities: identities.map { config, identity in
                let source: IdentityStatus.Source = !config.keepsTokens ? .static : store == .memory ? .memory : .store
                return IdentityStatus(config, live: identity.snapshot, source: source, now: now)
            },
            routes: routes.compactMap { RouteStatus($0, chosen: selectable[$0.name]?.current.name) })
    }

    func response(method: String, now: Date = Date()) -> AdminResponse {
        AdminResponse.readOnly(method: method, endpoint: "the identities endpoint", contentType: "application/json") {
            Array(report(now: now).json.utf8)
        }
    }
}
