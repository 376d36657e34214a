import CoreMetrics
import LatchkeyLoop
import LatchkeyUpstream

/// One route's series, made once at start: a request that ends increments a counter it
/// reaches by index, and never builds a label or looks a series up by its labels.
final class RouteMetrics: Sendable {
    /// The route's name: the `route` label.
    let route: String
    /// `latchkey_requests_total{route, status_class}`: [0] counts 1xx, … [4] 5xx.
    private let requests: [Counter]
    /// `latchkey_upstream_failures_total{route, kind}`.
    private let upstreamFailures: [UpstreamError.Code: Counter]
    /// `latchkey_upstream_duration_seconds{route}`: from the start of an upstream transfer to
    /// its last byte, for transfers that completed.
    private let upstreamDuration: CoreMetrics.Timer
    /// `latchkey_token_renewals_total{route}`: the upstream refused the identity's token and
    /// it was renewed. Nil on a route without an identity.
    let tokenRenewals: Counter?
    /// `latchkey_token_replays_total{route}`: a request sent again with the renewed token.
    let tokenReplays: Counter?
    /// `latchkey_upstream_connections_opened_total{route}`,
    /// `latchkey_upstream_connection_reuses_total{route}` and
    /// `latchkey_upstream_resends_total{route}`.
    private let connectionsOpened: Counter
    private let connectionReuses: Counter
    private let resends: Counter
    /// `latchkey_upgraded_connections{route}`: switched streams (WebSockets) open now.
    private let upgraded: Meter
    /// `latchkey_upgraded_bytes_total{route, direction}`: bytes of switched streams, counted
    /// when each ends; [0] `to_upstream`, [1] `to_client`.
    private let upgradedBytes: [Counter]

    static let statusClasses = ["1xx", "2xx", "3xx", "4xx", "5xx"]

    init(route: String, renewsTokens: Bool, factory: any MetricsFactory) {
        self.route = route
        requests = Self.statusClasses.map { statusClass in
            Counter(label: "latchkey_requests_total", dimensions: [("route", route), ("status_class", statusClass)], factory: factory)
        }
        upstreamFailures = Dictionary(uniqueKeysWithValues: UpstreamError.Code.allCases.map { code in
            (code, Counter(label: "latchkey_upstream_failures_total", dimensions: [("route", route), ("kind", code.metricLabel)], factory: factory))
        })
        upstreamDuration = CoreMetrics.Timer(label: "latchkey_upstream_duration_seconds", dimensions: [("route", route)], factory: factory)
        tokenRenewals = renewsTokens ? Counter(label: "latchkey_token_renewals_total", dimensions: [("route", route)], factory: factory) : nil
        tokenReplays = renewsTokens ? Counter(label: "latchkey_token_replays_total", dimensions: [("route", route)], factory: factory) : nil
        connectionsOpened = Counter(label: "latchkey_upstream_connections_opened_total", dimensions: [("route", route)], factory: factory)
        connectionReuses = Counter(label: "latchkey_upstream_connection_reuses_total", dimensions: [("route", route)], factory: factory)
        resends = Counter(label: "latchkey_upstream_resends_total", dimensions: [("route", route)], factory: factory)
        upgraded = Meter(label: "latchkey_upgraded_connections", dimensions: [("route", route)], factory: factory)
        upgradedBytes = ["to_upstream", "to_client"].map { direction in
            Counter(label: "latchkey_upgraded_bytes_total", dimensions: [("route", route), ("direction", direction)], factory: factory)
        }
    }

    /// A request switched protocols: its stream is open from now.
    func upgradeStarted() {
        upgraded.increment()
    }

    /// A switched stream ended, having carried these bytes each way.
    func upgradeEnded(toUpstream: UInt64, toClient: UInt64) {
        upgraded.decrement()
        upgradedBytes[0].increment(by: Int64(clamping: toUpstream))
        upgradedBytes[1].increment(by: Int64(clamping: toClient))
    }

    /// A response with `status` went to the client (relayed, or the proxy's own).
    func answered(status: Int) {
        let index = status / 100 - 1
        guard requests.indices.contains(index) else { return }
        requests[index].increment()
    }

    func upstreamFailed(_ code: UpstreamError.Code) {
        upstreamFailures[code]?.increment()
    }

    /// An upstream transfer ended, having gone on these connections.
    func upstreamConnections(_ use: ConnectionUse) {
        if use.opened > 0 { connectionsOpened.increment(by: use.opened) }
        if use.reused { connectionReuses.increment() }
        if use.resent { resends.increment() }
    }

    func upstreamCompleted(after duration: Duration) {
        upstreamDuration.recordNanoseconds(Int64(clamping: duration.nanosecondsClamped))
    }

    /// After a reload: the series that `next` (this route's in the reloaded configuration,
    /// nil when the route is gone) does not have leave the registry. The series both have are
    /// one and the same in the registry, and stay.
    func destroy(keeping next: RouteMetrics?) {
        if next?.tokenRenewals == nil {
            tokenRenewals?.destroy()
            tokenReplays?.destroy()
        }
        guard next == nil else { return }
        for counter in requests { counter.destroy() }
        for counter in upstreamFailures.values { counter.destroy() }
        upstreamDuration.destroy()
        for counter in [connectionsOpened, connectionReuses, resends] { counter.destroy() }
        upgraded.destroy()
        for counter in upgradedBytes { counter.destroy() }
    }
}

extension UpstreamError.Code {
    /// The `kind` label: the code in the snake case of metric labels.
    var metricLabel: String {
        switch self {
        case .connectFailed: "connect_failed"
        case .resolveFailed: "resolve_failed"
        case .connectTimeout: "connect_timeout"
        case .firstByteTimeout: "first_byte_timeout"
        case .idleTimeout: "idle_timeout"
        case .tls: "tls"
        case .sendFailed: "send_failed"
        case .receiveFailed: "receive_failed"
        case .cancelled: "cancelled"
        case .destinationRefused: "destination_refused"
        case .other: "other"
        }
    }
}
