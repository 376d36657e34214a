#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyServer
import LatchkeyUpstream
import Logging

/// Everything the proxy's data plane shares across loops: compiled once per configuration,
/// read-only. A reload makes a new one and hands it to each loop's handler; an exchange
/// keeps the one it started with to its end. A class: an exchange holds one reference,
/// not a retained copy of every field.
final class ProxyContext: Sendable {
    let routes: RouteTable
    let policies: [ListenerPolicy]
    let credentials: CredentialStore
    /// By name; routes that inject an identity's token look theirs up here.
    let identities: [String: Identity]
    let accessLog: AccessLog
    let metrics: ProxyMetrics
    let metricsEndpoint: MetricsEndpoint
    let readiness: Readiness
    let identitiesEndpoint: IdentitiesEndpoint
    let statusPage: StatusPageEndpoint
    /// Calls handoff endpoints; nil when no route has one.
    let handoffCaller: HandoffCaller?
    let handoffMarks: HandoffMarks
    /// Shared by every configuration of the process, as its throttle must be.
    let tlsFailureLog: TLSFailureLog
    /// The certificates of intercepted CONNECT tunnels; nil without a forward listener.
    let interception: InterceptCertificates?
    let logger: Logger
    /// How many upstream connections each loop keeps alive, and for how long.
    let upstreamPool: PoolLimits
    /// The inbound checks and routing of this configuration.
    let admission: Admission

    init(routes: RouteTable, policies: [ListenerPolicy], credentials: CredentialStore, identities: [String: Identity],
         accessLog: AccessLog, metrics: ProxyMetrics, metricsEndpoint: MetricsEndpoint, readiness: Readiness,
         identitiesEndpoint: IdentitiesEndpoint, statusPage: StatusPageEndpoint, handoffCaller: HandoffCaller?,
         handoffMarks: HandoffMarks, tlsFailureLog: TLSFailureLog, interception: InterceptCertificates? = nil,
         upstreamPool: PoolLimits = PoolLimits(), logger: Logger) {
        self.routes = routes
        self.policies = policies
        self.credentials = credentials
        self.identities = identities
        self.accessLog = accessLog
        self.metrics = metrics
        self.metricsEndpoint = metricsEndpoint
        self.readiness = readiness
        self.identitiesEndpoint = identitiesEndpoint
        self.statusPage = statusPage
        self.handoffCaller = handoffCaller
        self.handoffMarks = handoffMarks
        self.tlsFailureLog = tlsFailureLog
        self.interception = interception
        self.logger = logger
        self.upstreamPool = upstreamPool
        admission = Admission(routes: routes, policies: policies, identities: identities, handoffCaller: handoffCaller)
    }
}

/// The proxy's side of one loop: admits, routes and forwards each request. Glue: the
/// decision is `Admission`'s, the answer and the record `conclude`'s.
final class ProxyHandler: ServerHandler {
    let loop: EventLoop
    let upstream: UpstreamClient
    /// The configuration new requests get; replaced on this loop by a reload.
    var context: ProxyContext {
        didSet { configurePool() }
    }
    var logger: Logger { context.logger }

    init(loop: EventLoop, context: ProxyContext) throws {
        self.loop = loop
        self.context = context
        upstream = try UpstreamClient(loop: loop)
        configurePool()
    }

    /// The upstream connection pool takes the configuration's limits (closing what is over
    /// them now) and reports to its metrics.
    private func configurePool() {
        upstream.pool.limits = context.upstreamPool
        upstream.pool.idleGauge = context.metrics.upstreamIdleConnections
    }

    func handle(_ exchange: ServerExchange) -> ExchangeHandler {
        let context = context
        let decision = context.admission.decide(exchange.head, listener: exchange.listener.index, peer: exchange.peer,
                                                clientSubject: exchange.tls?.clientSubject,
                                                tunnel: exchange.tunnelAuthority.map { Admission.TunnelOrigin(authority: $0, overTLS: exchange.tls != nil) },
                                                credentials: context.credentials.snapshot, now: Date.init)
        switch decision {
        case .serve(let endpoint):
            serve(endpoint, to: exchange, in: context)
        case .refuse(let document, let route):
            conclude(exchange, .refused(document), route: route, in: context)
        case .challenge(let document, let fields):
            conclude(exchange, .refused(document, extraFields: fields), in: context)
        case .handOff(let forward, let settings, let caller, let destination):
            let handoff = HandoffExchange(exchange: exchange, route: forward.route, handoff: settings, handler: self, context: context,
                                          destination: destination, rewriter: forward.rewriter)
            handoff.start(caller: caller, identity: forward.identity, credentials: forward.blueprint.credentials)
            return handoff
        case .forward(let forward):
            let proxied = ProxyExchange(exchange: exchange, route: forward.route, rewriter: forward.rewriter, handler: self,
                                        context: context, blueprint: forward.blueprint, identity: forward.identity)
            proxied.start()
            return proxied
        case .tunnel(let plan):
            return openTunnel(plan, for: exchange, in: context)
        case .upgrade(let forward, let plan):
            let upgrade = UpgradeExchange(exchange: exchange, forward: forward, plan: plan, handler: self, context: context)
            upgrade.start()
            return upgrade
        }
        return LocalAnswer.shared
    }

    /// Answers from one of the proxy's own endpoints.
    private func serve(_ endpoint: Admission.Endpoint, to exchange: ServerExchange, in context: ProxyContext) {
        let method = exchange.head.method
        let response: AdminResponse
        switch endpoint {
        case .health: response = AdminResponse.json(status: 200, body: Array("{\"status\":\"ok\"}\n".utf8))
        case .readiness:
            let ready = context.readiness.answer()
            response = AdminResponse.json(status: ready.status, body: ready.body)
        case .metrics: response = context.metricsEndpoint.response(method: method)
        case .identities: response = context.identitiesEndpoint.response(method: method)
        case .statusPage(let path): response = context.statusPage.response(method: method, path: path)
        case .loginLink(let gate): return redeemLoginLink(exchange, gate: gate, in: context)
        }
        conclude(exchange, .served(response), in: context)
    }

    func serverAnswered(_ exchange: ServerExchange) {
        conclude(exchange, .serverAnswered, in: context)
    }

    func connection(_ event: ConnectionEvent, on listener: ListenerInfo) {
        switch event {
        case .opened: context.metrics.openConnections[listener.index].increment()
        case .closed: context.metrics.openConnections[listener.index].decrement()
        case .refusedOverCapacity: context.metrics.refused("over_capacity")
        }
    }
}
