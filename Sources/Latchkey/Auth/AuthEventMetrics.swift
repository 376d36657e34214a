import CoreMetrics
import LatchkeyAuth

/// Auth events as `latchkey_auth_events_total{identity, event}`: one identity's counters, one
/// per kind of event, made at start so that each is exported from 0 on (an alert on the
/// first `failed` needs the series before it).
struct AuthEventMetrics: AuthEventSink {
    private let counters: [AuthEvent.Kind: Counter]

    init(identity: String, factory: any MetricsFactory) {
        counters = Dictionary(uniqueKeysWithValues: AuthEvent.Kind.allCases.map { kind in
            (kind, Counter(label: "latchkey_auth_events_total", dimensions: [("identity", identity), ("event", kind.rawValue)], factory: factory))
        })
    }

    func record(_ event: AuthEvent) {
        counters[event.kind]?.increment()
    }

    /// The identity is gone from the configuration: its series leave the metrics.
    func destroy() {
        for counter in counters.values { counter.destroy() }
    }
}
