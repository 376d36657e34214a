/// `GET /.latchkey/metrics`: every series in the registry, in the Prometheus text
/// exposition format. The handler answers it after the listener's Host and inbound checks,
/// as nginx's stub_status sits behind its location's access rules: the series name routes,
/// identities and listeners and show traffic, which only the listener's users may see.
struct MetricsEndpoint: Sendable {
    static let path = "/.latchkey/metrics"
    /// The text format's version 0.0.4, which every Prometheus server scrapes.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    let registry: MetricsRegistry

    /// Asked of every request that passed the listener's checks.
    static func serves(path: Substring) -> Bool {
        AdminResponse.isPath(path, Self.path)
    }

    /// The exposition for GET and HEAD; 405 for any other method.
    func response(method: String) -> AdminResponse {
        AdminResponse.readOnly(method: method, endpoint: "the metrics endpoint", contentType: Self.contentType) { registry.exposition() }
    }
}
