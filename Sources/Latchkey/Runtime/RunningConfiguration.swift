import Foundation
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLogging
import Logging

/// What one configuration runs with: its identities, the store they keep tokens in, the
/// route identity file and the follower of `latchkey use`, and the data plane's context
/// made from them. The runtime holds the one in force; a reload makes the next one.
struct RunningConfiguration: Sendable {
    let config: Config
    let identities: IdentityRegistry
    let tokenStore: OpenTokenStore
    let routeIdentities: RouteIdentityFile?
    let follower: RouteIdentityFollower?
    /// Token requests and handoff calls; made once a configuration needs it, then kept.
    let client: AuthHTTPClient?
    let context: ProxyContext
}

/// The token store identities keep their tokens in, and the settings it was opened with:
/// nil for the memory store that stands in while no configuration so far kept anything in
/// one (`makeTokenStore` opens nothing then).
struct OpenTokenStore: Sendable {
    let store: any TokenStore
    let settings: TokenStoreSettings?

    /// The store `makeTokenStore(config:)` opened for `config`.
    init(_ store: any TokenStore, for config: Config) {
        self.store = store
        settings = config.identitiesInTokenStore.isEmpty ? nil : config.store
    }
}

/// What every configuration of one process shares: the credentials (one store, whose set a
/// reload replaces), the access log's sink and what it masks, the metrics registry, the key
/// of the handoff marks, the throttle of the TLS handshake failures' warnings, the status
/// page's recent auth events and the time the process started, the logger.
struct RuntimeServices: Sendable {
    let credentials: CredentialStore
    let sink: LogSink?
    /// The credentials and the secret captures of the identities in force.
    let redaction: HeldSecretsRedaction
    let metrics: MetricsRegistry
    let handoffMarks: HandoffMarks
    let tlsFailureLog: TLSFailureLog
    /// The certificates of intercepted CONNECT tunnels; nil without a forward listener.
    let interception: InterceptCertificates?
    /// Fed by every identity of every configuration (`IdentityRegistry`'s `recorder`).
    let authEvents = AuthEventRecorder()
    let startedAt = Date()
    let logger: Logger

    /// `config` with its parts made: the routes, and the follower, which has read the route
    /// identity file before any request is routed, so that the first one gets the identity
    /// `latchkey use` chose.
    func running(config: Config, identities: IdentityRegistry, tokenStore: OpenTokenStore, routeIdentities: RouteIdentityFile?,
                 client: AuthHTTPClient?, policies: [ListenerPolicy]) -> RunningConfiguration {
        let routes = RouteTable(config: config, identities: identities.identities)
        let follower = routeIdentities.map { RouteIdentityFollower(file: $0, routes: routes.selectable, logger: logger) }
        follower?.check()
        let hasHandoffs = config.routes.contains { $0.handoff != nil }
        let identitiesEndpoint = IdentitiesEndpoint(config: config, identities: identities.identities, selectable: routes.selectable)
        let context = ProxyContext(
            routes: routes,
            policies: policies,
            credentials: credentials,
            identities: identities.identities,
            accessLog: AccessLog(sink: sink, enabled: config.logging.accessLog,
                                 // Requests that match no route include login links.
                                 secretQueryParameters: routes.allSecretQueryParameters.union([SessionGate.tokenParameter])),
            metrics: ProxyMetrics(config: config, registry: metrics),
            metricsEndpoint: MetricsEndpoint(registry: metrics),
            readiness: Readiness(store: tokenStore.store as? any AvailabilityReportingStore, identities: Array(identities.identities.values)),
            identitiesEndpoint: identitiesEndpoint,
            statusPage: StatusPageEndpoint(identities: identitiesEndpoint, routes: config.routes, events: authEvents, startedAt: startedAt),
            handoffCaller: hasHandoffs ? client.map(HandoffCaller.init(client:)) : nil,
            handoffMarks: handoffMarks,
            tlsFailureLog: tlsFailureLog,
            interception: interception,
            upstreamPool: config.limits.upstreamPool,
            logger: logger
        )
        return RunningConfiguration(config: config, identities: identities, tokenStore: tokenStore, routeIdentities: routeIdentities,
                                    follower: follower, client: client, context: context)
    }

    /// What the file watcher checks for `running`: the secret files (and, after them, the
    /// identities' own, which let an identity refused for its configuration ask again), and
    /// the route identity file when its routes have a choice.
    func fileChecks(for running: RunningConfiguration) -> [FileWatcher.Check] {
        let credentials = credentials
        let logger = logger
        let identities = running.identities
        let secrets: FileWatcher.Check = {
            let changed = credentials.reloadIfChanged()
            if !changed.isEmpty {
                logger.info("secret files changed", metadata: ["credentials": .array(changed.map { .string($0) })])
            }
            identities.secretsReloaded(changed)
        }
        return [secrets] + (running.follower.map { [$0.check] } ?? [])
    }

    /// The identities of `config`, their events logged, counted and recorded for the status
    /// page; those of `previous` named in `kept` go on as they are.
    func identities(for config: Config, store: any TokenStore, client: AuthHTTPClient?, previous: IdentityRegistry? = nil,
                    kept: [String] = []) throws -> IdentityRegistry {
        try IdentityRegistry(config: config, credentials: credentials, store: store, client: client, logger: Logger(label: "latchkey.auth"),
                             metrics: metrics, recorder: authEvents, previous: previous, kept: kept)
    }

    /// The HTTP client `config` needs: the running one if there is one, else a new one when
    /// an identity gets tokens from an IdP or a route calls a handoff endpoint.
    static func client(for config: Config, running: AuthHTTPClient?) throws -> AuthHTTPClient? {
        if let running { return running }
        let needed = IdentityRegistry.needsHTTPClient(config) || config.routes.contains { $0.handoff != nil }
        return needed ? try AuthHTTPClient() : nil
    }
}
