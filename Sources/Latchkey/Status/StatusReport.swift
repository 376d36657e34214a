#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig

/// What `latchkey status` reports: every identity of the configuration and every route
/// that injects one, read from the token store the CLI and `serve` share. Never a token.
public struct StatusReport: Sendable, Equatable {
    public var identities: [IdentityStatus]
    public var routes: [RouteStatus]

    public init(identities: [IdentityStatus], routes: [RouteStatus]) {
        self.identities = identities
        self.routes = routes
    }

    /// Reads each identity's entry in `store` (a static identity's own secret instead) and
    /// takes `chosen`, what `latchkey use` chose for routes. An entry that cannot be read is
    /// reported as such, and the others still are.
    public static func gather(
        config: Config, store: any TokenStore, chosen: [String: String], environment: [String: String], now: Date
    ) async -> StatusReport {
        var identities: [IdentityStatus] = []
        for identity in config.identities.sorted(by: { $0.name < $1.name }) {
            identities.append(await status(of: identity, config: config, store: store, environment: environment, now: now))
        }
        let routes = config.routes.compactMap { RouteStatus($0, chosen: chosen[$0.name]) }
        return StatusReport(identities: identities, routes: routes)
    }

    private static func status(
        of identity: IdentityConfig, config: Config, store: any TokenStore, environment: [String: String], now: Date
    ) async -> IdentityStatus {
        if case .staticToken(let source) = identity.grant {
            return IdentityStatus(identity, staticToken: Result { () throws(SecretError) in
                try SecretResolver.resolve(source, environment: environment)
            }, now: now)
        }
        guard config.store.kind != .memory else { return .inMemory(identity) }
        do {
            let token = try await store.load(identity: identity.name)
            let loggedOut = token == nil ? try await store.isLoggedOut(identity: identity.name) : false
            let failure = try await store.loadFailure(identity: identity.name)
            return IdentityStatus(identity, stored: token, loggedOut: loggedOut, failure: failure, now: now)
        } catch {
            return IdentityStatus(name: identity.name, grant: identity.grant.name, source: .store, state: .unknown,
                                  detail: "cannot read its stored token: \(error)")
        }
    }
}
