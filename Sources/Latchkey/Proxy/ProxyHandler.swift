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
    let logger: Logger

    init(routes: RouteTable, policies: [ListenerPolicy], credentials: CredentialStore, identities: [String: Identity],
         accessLog: AccessLog, metrics: ProxyMetrics, metricsEndpoint: MetricsEndpoint, readiness: Readiness,
         identitiesEndpoint: IdentitiesEndpoint, statusPage: StatusPageEndpoint, handoffCaller: HandoffCaller?,
         handoffMarks: HandoffMarks, logger: Logger) {
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
        self.logger = logger
    }
}

/// The proxy's side of one loop: admits, routes and forwards each request.
final class ProxyHandler: ServerHandler {
    let loop: EventLoop
    let upstream: UpstreamClient
    /// The configuration new requests get; replaced on this loop by a reload.
    var context: ProxyContext
    var logger: Logger { context.logger }

    init(loop: EventLoop, context: ProxyContext) throws {
        self.loop = loop
        self.context = context
        upstream = try UpstreamClient(loop: loop)
    }

    func handle(_ exchange: ServerExchange) -> ExchangeHandler {
        let head = exchange.head
        // Health and readiness say nothing secret and are probed without credentials
        // (Docker's HEALTHCHECK, a kubelet at the pod's address), so they come before
        // every check.
        if head.target == "/.latchkey/health" {
            return answer(exchange, status: 200, body: Array("{\"status\":\"ok\"}\n".utf8))
        }
        if head.target == Readiness.path {
            let ready = context.readiness.answer()
            return answer(exchange, status: ready.status, body: ready.body)
        }
        let policy = context.policies[exchange.listener.index]
        let host = head.fields["Host"]

        guard policy.acceptsHost(host) else {
            return answer(exchange, ErrorDocument(status: 421, error: "unknown_host",
                message: "this proxy does not answer for that Host; add it to the listener's allowed_hosts"))
        }
        if case .sharedSecret(let header, let name) = policy.inbound {
            guard let presented = head.fields[header] else {
                return answer(exchange, ErrorDocument(status: 401, error: "unauthorized", message: "this listener requires the \(header) header"))
            }
            guard let expected = context.credentials[name], constantTimeEquals(presented, expected) else {
                return answer(exchange, ErrorDocument(status: 403, error: "forbidden", message: "the \(header) header does not match"))
            }
        }
        if case .session(let gate) = policy.inbound {
            if head.target == SessionGate.loginPath || head.target.hasPrefix(SessionGate.loginPath + "?") {
                return redeemLoginLink(exchange, gate: gate)
            }
            guard gate.admits(head.fields, now: Date()) else {
                return answer(exchange, ErrorDocument(status: 401, error: "unauthorized",
                    message: "this listener requires a session: open a login link made by `latchkey login-link ROUTE`"))
            }
        }
        guard let target = RequestTarget(head.target) else {
            return answer(exchange, ErrorDocument(status: 400, error: "bad_request",
                message: "the request target must be an absolute path without dot-segments"))
        }
        // Metrics, identities and the status page name routes and identities, and metrics show traffic:
        // only for those who pass the listener's checks above (see MetricsEndpoint).
        if MetricsEndpoint.serves(path: target.path) {
            return answer(exchange, context.metricsEndpoint.response(method: head.method))
        }
        if IdentitiesEndpoint.serves(path: target.path) {
            return answer(exchange, context.identitiesEndpoint.response(method: head.method))
        }
        if StatusPageEndpoint.serves(path: target.path) {
            return answer(exchange, context.statusPage.response(method: head.method, path: target.path))
        }
        // `/.latchkey/handoff?to=PAGE` hands off for PAGE's route, then sends the browser there.
        var requestedHandoff: String?
        var routedPath = target.path
        if target.path == HandoffDestination.path {
            switch HandoffDestination.page(query: target.query) {
            case .page(let page) where head.method == "GET" || head.method == "HEAD":
                requestedHandoff = page
                routedPath = RequestTarget(page)?.path ?? routedPath
            case .page:
                return answer(exchange, ErrorDocument(status: 405, error: "method_not_allowed", message: "\(HandoffDestination.path) takes GET or HEAD"))
            case .refused(let document):
                return answer(exchange, document)
            }
        }
        // Lower-cased only for tables that match on it.
        let routeHost = context.routes.anyRouteNamesHost ? host.map { Substring(RequestTarget.hostWithoutPort($0).lowercased()) } : nil
        guard let route = context.routes.match(listener: exchange.listener.index, path: routedPath, host: routeHost) else {
            return answer(exchange, ErrorDocument(status: 404, error: "no_route", message: "no route matches this request's path"))
        }
        if requestedHandoff != nil, route.handoff == nil || route.keepsCookies {
            let reason = route.keepsCookies ? "keeps its web session in the proxy (jar: proxy)" : "has no handoff"
            return answer(exchange, ErrorDocument(status: 404, error: "no_route", message: "the route of that page \(reason)",
                                                  route: route.name), route: route)
        }
        if route.injectsCredentials && CrossSiteCheck.isCrossSite(head.fields, host: host) {
            return answer(exchange, ErrorDocument(status: 403, error: "cross_site",
                message: "cross-site browser requests may not use this route's credentials", route: route.name), route: route)
        }
        let credentials = context.credentials.snapshot
        for injection in route.injections {
            guard case .credential(let name) = injection.source, credentials[name] == nil else { continue }
            return answer(exchange, ErrorDocument(status: 503, error: "credential_unavailable",
                message: "the credential \(name) has no value", route: route.name), route: route)
        }

        let identity: Identity?
        switch IdentityHeader.choose(for: route, fields: head.fields, isKnown: { context.identities[$0] != nil }) {
        case .use(let chosen): identity = chosen
        case .refuse(let document): return answer(exchange, document, route: route)
        }

        let inboundHeader: String? = if case .sharedSecret(let header, _) = policy.inbound { header } else { nil }
        let blueprint = RequestBlueprint(head: head, target: target, clientHost: host, peer: exchange.peer,
                                         inboundHeader: inboundHeader, credentials: credentials)
        let rewriter = ResponseRewriter(route: route, clientHost: host, clientOnLoopback: exchange.peer?.isLoopback ?? true)
        if let handoff = route.handoff, !route.keepsCookies, let caller = context.handoffCaller,
           let destination = requestedHandoff ?? (handoff.beforeFirstPage && BrowserNavigation.isNavigation(head)
               && !HandoffMarks.hasHandedOff(head.fields) ? head.target : nil) {
            let handoffExchange = HandoffExchange(exchange: exchange, route: route, handoff: handoff, handler: self, context: context,
                                                  destination: destination, rewriter: rewriter)
            handoffExchange.start(caller: caller, identity: identity, credentials: credentials)
            return handoffExchange
        }
        let proxied = ProxyExchange(exchange: exchange, route: route, rewriter: rewriter, handler: self, context: context,
                                    blueprint: blueprint, identity: identity)
        proxied.start()
        return proxied
    }

    func serverAnswered(_ exchange: ServerExchange) {
        if let status = exchange.status { context.metrics.refused(ErrorDocument.code(forStatus: status)) }
        record(exchange, route: nil, in: context)
    }

    func connection(_ event: ConnectionEvent, on listener: ListenerInfo) {
        switch event {
        case .opened: context.metrics.openConnections[listener.index].increment()
        case .closed: context.metrics.openConnections[listener.index].decrement()
        case .refusedOverCapacity: context.metrics.refused("over_capacity")
        }
    }

    /// The end of an exchange: its access-log line and, on a route, its count by status.
    /// `context` is the one the exchange started with: the route's index is that
    /// configuration's.
    func record(_ exchange: ServerExchange, route: Route?, in context: ProxyContext, upstreamTime: Duration? = nil, outcome: String? = nil) {
        context.accessLog.record(exchange, route: route, now: loop.now, upstreamTime: upstreamTime, outcome: outcome)
        if let route, let status = exchange.status { context.metrics.routes[route.index].answered(status: status) }
    }

    /// Answers with the proxy's own error instead of forwarding.
    func answer(_ exchange: ServerExchange, _ document: ErrorDocument, route: Route? = nil) -> ExchangeHandler {
        exchange.respond(document)
        context.metrics.refused(document.error)
        record(exchange, route: route, in: context)
        return LocalAnswer.shared
    }

    /// A proxy error for a browser's window: the HTML page, counted and logged as every
    /// refusal is.
    func answerWithPage(_ exchange: ServerExchange, _ document: ErrorDocument, extraFields: HTTPFields = HTTPFields(), route: Route?,
                        in context: ProxyContext) {
        var fields = document.pageFields
        for field in extraFields { fields.append(field) }
        exchange.respond(status: document.status, fields: fields, body: document.pageBody)
        context.metrics.refused(document.error)
        record(exchange, route: route, in: context, outcome: document.error)
    }

    private func answer(_ exchange: ServerExchange, _ response: AdminResponse) -> ExchangeHandler {
        exchange.respond(status: response.status, fields: response.fields, body: response.body)
        return LocalAnswer.shared
    }

    private func answer(_ exchange: ServerExchange, status: Int, body: [UInt8]) -> ExchangeHandler {
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: "application/json")
        exchange.respond(status: status, fields: fields, body: body)
        return LocalAnswer.shared
    }
}
