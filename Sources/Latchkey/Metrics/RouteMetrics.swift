import LatchkeyLoop
import LatchkeyUpstream
import Synchronization

/// One route's series, one object made once at start (`MetricGroup`): a request that ends
/// adds to a count it reaches by index, and never builds a label or looks a series up.
/// Every series is exported from 0 on.
final class RouteMetrics: MetricGroup {
    /// The route's name: the `route` label.
    let route: String
    var key: String { route }
    /// `route="api"`, as the exposition writes it.
    private let labels: String
    /// `latchkey_requests_total{route, status_class}`: [0] counts 1xx, … [4] 5xx.
    private let requests: InlineArray<5, Atomic<Int64>>
    /// `latchkey_upstream_failures_total{route, kind}`, in the order of `failureKinds`.
    private let upstreamFailures: InlineArray<11, Atomic<Int64>>
    /// `latchkey_upstream_duration_seconds{route}`: from the start of an upstream transfer to
    /// its last byte, for transfers that completed.
    private let upstreamDuration: DurationHistogramSeries
    /// Whether the route injects an identity's token, and so has the two renewal series.
    private let renewsTokens: Atomic<Bool>
    /// `latchkey_token_renewals_total{route}`: the upstream refused the identity's token and
    /// it was renewed; `latchkey_token_replays_total{route}`: a request sent again with the
    /// renewed token.
    private let tokenRenewals = Atomic<Int64>(0)
    private let tokenReplays = Atomic<Int64>(0)
    /// `latchkey_upstream_connections_opened_total{route}`,
    /// `latchkey_upstream_connection_reuses_total{route}` and
    /// `latchkey_upstream_resends_total{route}`.
    private let connectionsOpened = Atomic<Int64>(0)
    private let connectionReuses = Atomic<Int64>(0)
    private let resends = Atomic<Int64>(0)
    /// `latchkey_upgraded_connections{route}`: switched streams (WebSockets) open now.
    private let upgraded = Atomic<Int64>(0)
    /// `latchkey_upgraded_bytes_total{route, direction}`: bytes of switched streams, counted
    /// when each ends; [0] `to_upstream`, [1] `to_client`.
    private let upgradedBytes: InlineArray<2, Atomic<Int64>>

    static let statusClasses = ["1xx", "2xx", "3xx", "4xx", "5xx"]
    /// The `kind` label's values, each an index into `upstreamFailures`.
    static let failureKinds = UpstreamError.Code.allCases
    private static let statusClassLabels = statusClasses.map { #"status_class=""# + $0 + #"""# }
    private static let failureKindLabels = failureKinds.map { #"kind=""# + $0.metricLabel + #"""# }
    private static let directionLabels = [#"direction="to_upstream""#, #"direction="to_client""#]

    private enum Family: Int, CaseIterable {
        case requests, upstreamFailures, upstreamDuration, tokenRenewals, tokenReplays, connectionsOpened, connectionReuses,
             resends, upgraded, upgradedBytes

        var family: MetricFamily {
            switch self {
            case .requests: MetricFamily(name: "latchkey_requests_total", kind: .counter)
            case .upstreamFailures: MetricFamily(name: "latchkey_upstream_failures_total", kind: .counter)
            case .upstreamDuration: MetricFamily(name: "latchkey_upstream_duration_seconds", kind: .histogram)
            case .tokenRenewals: MetricFamily(name: "latchkey_token_renewals_total", kind: .counter)
            case .tokenReplays: MetricFamily(name: "latchkey_token_replays_total", kind: .counter)
            case .connectionsOpened: MetricFamily(name: "latchkey_upstream_connections_opened_total", kind: .counter)
            case .connectionReuses: MetricFamily(name: "latchkey_upstream_connection_reuses_total", kind: .counter)
            case .resends: MetricFamily(name: "latchkey_upstream_resends_total", kind: .counter)
            case .upgraded: MetricFamily(name: "latchkey_upgraded_connections", kind: .gauge)
            case .upgradedBytes: MetricFamily(name: "latchkey_upgraded_bytes_total", kind: .counter)
            }
        }
    }

    static let families = Family.allCases.map(\.family)

    private init(route: String, renewsTokens: Bool) {
        precondition(Self.failureKinds.count == 11, "upstreamFailures holds one count per UpstreamError.Code")
        self.route = route
        labels = MetricsRegistry.render([("route", route)])
        requests = InlineArray { _ in Atomic(0) }
        upstreamFailures = InlineArray { _ in Atomic(0) }
        upstreamDuration = DurationHistogramSeries(name: Family.upstreamDuration.family.name, labels: labels,
                                                   bounds: MetricsRegistry.durationBounds)
        self.renewsTokens = Atomic(renewsTokens)
        upgradedBytes = InlineArray { _ in Atomic(0) }
    }

    /// The route's series in `registry`: those it has there already (a reloaded
    /// configuration's route keeps its counts), or new ones. `renewsTokens` holds for new
    /// ones only; a kept route takes it when the configuration it is made for runs
    /// (`ProxyMetrics.retire(replacedBy:)`).
    static func registered(route: String, renewsTokens: Bool, in registry: MetricsRegistry) -> RouteMetrics {
        registry.group(route) { RouteMetrics(route: route, renewsTokens: renewsTokens) }
    }

    /// Whether the route has the renewal series from now. Series that leave and come back
    /// start again from 0, as a destroyed series made again would.
    func setRenewsTokens(_ renews: Bool) {
        let renewed = renewsTokens.exchange(renews, ordering: .relaxed)
        guard renewed, !renews else { return }
        tokenRenewals.store(0, ordering: .relaxed)
        tokenReplays.store(0, ordering: .relaxed)
    }

    /// A response with `status` went to the client (relayed, or the proxy's own).
    func answered(status: Int) {
        let index = status / 100 - 1
        guard requests.indices.contains(index) else { return }
        requests[index].wrappingAdd(1, ordering: .relaxed)
    }

    func upstreamFailed(_ code: UpstreamError.Code) {
        guard let index = Self.failureKinds.firstIndex(of: code) else { return }
        upstreamFailures[index].wrappingAdd(1, ordering: .relaxed)
    }

    /// An upstream transfer ended, having gone on these connections.
    func upstreamConnections(_ use: ConnectionUse) {
        if use.opened > 0 { connectionsOpened.wrappingAdd(Int64(use.opened), ordering: .relaxed) }
        if use.reused { connectionReuses.wrappingAdd(1, ordering: .relaxed) }
        if use.resent { resends.wrappingAdd(1, ordering: .relaxed) }
    }

    func upstreamCompleted(after duration: Duration) {
        upstreamDuration.recordNanoseconds(Int64(clamping: duration.nanosecondsClamped))
    }

    /// The upstream refused the identity's token and it was renewed.
    func tokenRenewed() {
        tokenRenewals.wrappingAdd(1, ordering: .relaxed)
    }

    /// A request went again with the renewed token.
    func tokenReplayed() {
        tokenReplays.wrappingAdd(1, ordering: .relaxed)
    }

    /// A request switched protocols: its stream is open from now.
    func upgradeStarted() {
        upgraded.wrappingAdd(1, ordering: .relaxed)
    }

    /// A switched stream ended, having carried these bytes each way.
    func upgradeEnded(toUpstream: UInt64, toClient: UInt64) {
        upgraded.wrappingSubtract(1, ordering: .relaxed)
        upgradedBytes[0].wrappingAdd(Int64(clamping: toUpstream), ordering: .relaxed)
        upgradedBytes[1].wrappingAdd(Int64(clamping: toClient), ordering: .relaxed)
    }

    func emit(family: Int, into buffer: inout [UInt8]) {
        guard let family = Family(rawValue: family) else { return }
        let name = family.family.name
        switch family {
        case .requests:
            for index in requests.indices {
                MetricSample.append(&buffer, name: name, labels: labels, extra: Self.statusClassLabels[index],
                                    count: requests[index].load(ordering: .relaxed))
            }
        case .upstreamFailures:
            for index in upstreamFailures.indices {
                MetricSample.append(&buffer, name: name, labels: labels, extra: Self.failureKindLabels[index],
                                    count: upstreamFailures[index].load(ordering: .relaxed))
            }
        case .upstreamDuration:
            upstreamDuration.emit(into: &buffer)
        case .tokenRenewals:
            guard renewsTokens.load(ordering: .relaxed) else { return }
            MetricSample.append(&buffer, name: name, labels: labels, count: tokenRenewals.load(ordering: .relaxed))
        case .tokenReplays:
            guard renewsTokens.load(ordering: .relaxed) else { return }
            MetricSample.append(&buffer, name: name, labels: labels, count: tokenReplays.load(ordering: .relaxed))
        case .connectionsOpened:
            MetricSample.append(&buffer, name: name, labels: labels, count: connectionsOpened.load(ordering: .relaxed))
        case .connectionReuses:
            MetricSample.append(&buffer, name: name, labels: labels, count: connectionReuses.load(ordering: .relaxed))
        case .resends:
            MetricSample.append(&buffer, name: name, labels: labels, count: resends.load(ordering: .relaxed))
        case .upgraded:
            MetricSample.append(&buffer, name: name, labels: labels, gauge: Double(upgraded.load(ordering: .relaxed)))
        case .upgradedBytes:
            for index in upgradedBytes.indices {
                MetricSample.append(&buffer, name: name, labels: labels, extra: Self.directionLabels[index],
                                    count: upgradedBytes[index].load(ordering: .relaxed))
            }
        }
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
