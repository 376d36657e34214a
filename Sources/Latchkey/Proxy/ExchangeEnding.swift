import LatchkeyHTTP
import LatchkeyServer
import LatchkeyUpstream

/// Every way an exchange ends, for the one place that answers the client and records the
/// exchange (`ProxyHandler.conclude`): status, access-log line, metrics.
enum ExchangeEnding {
    /// One of the proxy's own endpoints answered (health, readiness, metrics, identities,
    /// status page). Not access-logged: probes and scrapes would drown the requests.
    case served(AdminResponse)
    /// The proxy refused or failed the request itself: its JSON error, or the HTML page of
    /// it for a browser's window. Counted by error code. `outcome`: logged when the
    /// refusal came after admission (why a forwarded request ended so).
    case refused(ErrorDocument, extraFields: HTTPFields = HTTPFields(), form: Form = .json, outcome: String? = nil)
    /// The proxy answered with something other than an error (a handoff's or a login
    /// link's redirect).
    case answered(status: Int, fields: HTTPFields, outcome: String)
    /// The upstream's response reached the client whole.
    case relayed(upstreamTime: Duration?)
    /// The upstream failed. `headSent`: the client has part of the response, which is cut
    /// so that it can tell, never completed.
    case upstreamFailed(UpstreamError, headSent: Bool, upstreamTime: Duration?)
    /// The client went away before its answer was complete.
    case clientGone(upstreamTime: Duration?)
    /// The server answered the request itself (malformed, over a limit): record only.
    case serverAnswered
    /// A CONNECT's tunnel opened (the server answered 200) or, for a relay, ended.
    case tunneled(outcome: String)

    enum Form {
        case json
        case page
    }
}

extension ProxyHandler {
    /// Ends `exchange`: answers the client where the ending calls for it, and records it.
    /// `context` is the one the exchange started with (the route's index is that
    /// configuration's); `route`, the one it matched, if any.
    func conclude(_ exchange: ServerExchange, _ ending: ExchangeEnding, route: Route? = nil, in context: ProxyContext) {
        var upstreamTime: Duration?
        var outcome: String?
        let routeMetrics = route.map { context.metrics.routes[$0.index] }
        switch ending {
        case .served(let response):
            exchange.respond(status: response.status, fields: response.fields, body: response.body)
            return
        case .refused(let document, let extraFields, let form, let refusalOutcome):
            var fields = form == .page ? document.pageFields : document.fields
            for field in extraFields { fields.append(field) }
            exchange.respond(status: document.status, fields: fields, body: form == .page ? document.pageBody : document.body)
            context.metrics.refused(document.error)
            outcome = refusalOutcome
        case .answered(let status, let fields, let answeredOutcome):
            exchange.respond(status: status, fields: fields, body: [])
            outcome = answeredOutcome
        case .relayed(let time):
            exchange.finish()
            if let routeMetrics, let time { routeMetrics.upstreamCompleted(after: time) }
            upstreamTime = time
        case .upstreamFailed(let error, let headSent, let time):
            routeMetrics?.upstreamFailed(error.code)
            context.logger.warning("upstream failed", metadata: [
                "route": .string(route?.name ?? "-"), "error": .string("\(error.code)"), "detail": .string(error.detail),
            ])
            if headSent { exchange.abort() } else { exchange.respond(ErrorDocument(upstreamFailure: error, route: route?.name)) }
            upstreamTime = time
            outcome = "upstream_\(error.code)"
        case .clientGone(let time):
            upstreamTime = time
            outcome = "client_gone"
        case .serverAnswered:
            if let status = exchange.status { context.metrics.refused(ErrorDocument.code(forStatus: status)) }
        case .tunneled(let tunnelOutcome):
            outcome = tunnelOutcome
        }
        context.accessLog.record(exchange, route: route, now: loop.now, upstreamTime: upstreamTime, outcome: outcome)
        if let routeMetrics, let status = exchange.status { routeMetrics.answered(status: status) }
    }
}
