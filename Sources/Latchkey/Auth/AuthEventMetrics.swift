import LatchkeyAuth
import Synchronization

/// Auth events as `latchkey_auth_events_total{identity, event}`: one identity's counts, one
/// per kind of event, made at start as one group (`MetricGroup`) so that each is exported
/// from 0 on (an alert on the first `failed` needs the series before it).
final class AuthEventMetrics: AuthEventSink, MetricGroup {
    let identity: String
    var key: String { identity }
    /// `identity="idp"`, as the exposition writes it.
    private let labels: String
    /// In the order of `kinds`.
    private let counts: InlineArray<5, Atomic<Int64>>

    static let families = [MetricFamily(name: "latchkey_auth_events_total", kind: .counter)]
    /// The `event` label's values, each an index into `counts`.
    private static let kinds = AuthEvent.Kind.allCases
    private static let kindLabels = kinds.map { #"event=""# + $0.rawValue + #"""# }

    private init(identity: String) {
        precondition(Self.kinds.count == 5, "counts holds one count per AuthEvent.Kind")
        self.identity = identity
        labels = MetricsRegistry.render([("identity", identity)])
        counts = InlineArray { _ in Atomic(0) }
    }

    /// The identity's counts in `registry`: those it has there already (a reloaded
    /// configuration's identity keeps its counts), or new ones.
    static func registered(identity: String, in registry: MetricsRegistry) -> AuthEventMetrics {
        registry.group(identity) { AuthEventMetrics(identity: identity) }
    }

    func record(_ event: AuthEvent) {
        guard let index = Self.kinds.firstIndex(of: event.kind) else { return }
        counts[index].wrappingAdd(1, ordering: .relaxed)
    }

    func emit(family: Int, into buffer: inout [UInt8]) {
        for index in counts.indices {
            MetricSample.append(&buffer, name: Self.families[family].name, labels: labels, extra: Self.kindLabels[index],
                                count: counts[index].load(ordering: .relaxed))
        }
    }
}
