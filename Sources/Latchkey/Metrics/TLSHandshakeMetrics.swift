import CoreMetrics
import LatchkeyConfig
import LatchkeyServer
import LatchkeyTLS

/// `latchkey_tls_handshakes_total{listener, outcome}`: every handshake on a TLS listener,
/// or inside a forward listener's intercepted tunnels, by how it ended. Every series of
/// every such listener is made at start, as ProxyMetrics' are; plain reverse listeners
/// have none.
struct TLSHandshakeMetrics: Sendable {
    /// By listener index; empty for a plain listener.
    private let counters: [[String: Counter]]

    /// `new` and `resumed` (a session from a ticket or the cache), then every failure's reason.
    static let outcomes = ["new", "resumed"] + TLSHandshakeFailure.Reason.allCases.map(\.rawValue)

    init(config: Config, factory: any MetricsFactory) {
        counters = config.listeners.map { listener in
            guard listener.tls != nil || listener.mode == .forward else { return [:] }
            return Dictionary(uniqueKeysWithValues: Self.outcomes.map { outcome in
                (outcome, Counter(label: "latchkey_tls_handshakes_total", dimensions: [("listener", listener.name), ("outcome", outcome)],
                                  factory: factory))
            })
        }
    }

    static func outcome(_ outcome: TLSHandshakeOutcome) -> String {
        switch outcome {
        case .completed(let info): info.resumed ? "resumed" : "new"
        case .failed(let failure): failure.reason.rawValue
        }
    }

    func record(_ outcome: TLSHandshakeOutcome, listener: Int) {
        guard counters.indices.contains(listener) else { return }
        counters[listener][Self.outcome(outcome)]?.increment()
    }
}
