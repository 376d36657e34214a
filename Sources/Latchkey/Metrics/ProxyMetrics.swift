import CoreMetrics
import LatchkeyConfig

/// The data plane's metrics (README, "Metrics"), made once at start in the registry: the
/// routes' as groups, the rest through swift-metrics. Every series that can exist is made
/// here, so each is exported from 0 on: a rate over a series that appears only with its
/// first event would miss that event. Labels are configuration names and fixed words only,
/// never anything a request carries.
struct ProxyMetrics: Sendable {
    /// By `Route.index`.
    let routes: [RouteMetrics]
    /// By `Route.index`: whether the route injects an identity's token in this configuration.
    private let renewsTokens: [Bool]
    private let registry: MetricsRegistry
    /// `latchkey_open_connections{listener}`, by listener index.
    let openConnections: [Meter]
    /// `latchkey_refused_requests_total{reason}`, by the `error` code of the proxy's answer.
    private let refusals: [String: Counter]
    let tlsHandshakes: TLSHandshakeMetrics
    /// `latchkey_upstream_idle_connections`: upstream connections kept alive in the loops'
    /// pools now.
    let upstreamIdleConnections: Meter

    /// Every `error` code of an answer the proxy makes instead of forwarding, except the
    /// upstream failures (counted by kind, per route).
    static let refusalReasons = [
        // The server's own answers, before any handler.
        "bad_request", "request_timeout", "payload_too_large", "uri_too_long", "headers_too_large",
        "not_implemented", "http_version_not_supported", "over_capacity",
        // The listener's checks and routing.
        "unknown_host", "unauthorized", "forbidden", "no_route",
        // A route's checks and its identity.
        "cross_site", "identity_not_allowed", "credential_unavailable", "token_rejected", "login_required", "identity_unavailable",
        "identity_misconfigured", "handoff_failed", "method_not_allowed", "not_allowed", "upgrade_not_allowed",
        // A forward listener's checks.
        "proxy_authentication_required", "host_not_allowed", "destination_not_allowed", "interception_failed", "misdirected_request",
        // A code missing from this list (asserted against in debug builds).
        "other",
    ]

    init(config: Config, registry: MetricsRegistry) {
        let routes = config.routes.map { ($0.name, $0.identity != nil) } + (config.hasTunnelHosts ? [(RouteTable.passthroughName, false)] : [])
        self.routes = routes.map { RouteMetrics.registered(route: $0.0, renewsTokens: $0.1, in: registry) }
        renewsTokens = routes.map(\.1)
        self.registry = registry
        openConnections = config.listeners.map { listener in
            Meter(label: "latchkey_open_connections", dimensions: [("listener", listener.name)], factory: registry)
        }
        refusals = Dictionary(uniqueKeysWithValues: Self.refusalReasons.map { reason in
            (reason, Counter(label: "latchkey_refused_requests_total", dimensions: [("reason", reason)], factory: registry))
        })
        tlsHandshakes = TLSHandshakeMetrics(config: config, factory: registry)
        upstreamIdleConnections = Meter(label: "latchkey_upstream_idle_connections", dimensions: [], factory: registry)
    }

    /// `next`, a reloaded configuration's, replaces these: the series of the routes it lacks
    /// leave the registry. Made in the same registry, the rest are the same series, and
    /// have the renewal series from now if their route injects a token in `next`.
    func retire(replacedBy next: ProxyMetrics) {
        for (route, renews) in zip(next.routes, next.renewsTokens) { route.setRenewsTokens(renews) }
        let kept = Set(next.routes.map(\.route))
        for route in routes where !kept.contains(route.route) { registry.remove(route) }
    }

    /// The proxy answered with its own error `code` instead of forwarding the request.
    func refused(_ code: String) {
        assert(refusals[code] != nil, "add \(code) to ProxyMetrics.refusalReasons")
        (refusals[code] ?? refusals["other"])?.increment()
    }
}
