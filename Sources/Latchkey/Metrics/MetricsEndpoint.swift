import LatchkeyHTTP
import LatchkeyServer
import Prometheus

/// `GET /.latchkey/metrics`: every series in the registry, in the Prometheus text
/// exposition format. The handler answers it after the listener's Host and inbound checks,
/// as nginx's stub_status sits behind its location's access rules: the series name routes,
/// identities and listeners and show traffic, which only the listener's users may see.
struct MetricsEndpoint: Sendable {
    static let path = "/.latchkey/metrics"
    /// The text format's version 0.0.4, which every Prometheus server scrapes.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    let registry: PrometheusCollectorRegistry

    /// Asked of every request that passed the listener's checks: the length comparison
    /// first spares the others a string comparison.
    static func serves(path: Substring) -> Bool {
        path.utf8.count == Self.path.utf8.count && path == Self.path
    }

    struct Response {
        var status: Int
        var fields: HTTPFields
        var body: [UInt8]
    }

    /// The exposition for GET and HEAD (the server leaves out a HEAD response's body); 405
    /// with `Allow` for any other method (RFC 9110 §15.5.6).
    func response(method: String) -> Response {
        guard method == "GET" || method == "HEAD" else {
            let document = ErrorDocument(status: 405, error: "method_not_allowed", message: "the metrics endpoint answers GET and HEAD")
            var fields = document.fields
            fields.append(name: "Allow", value: "GET, HEAD")
            return Response(status: document.status, fields: fields, body: document.body)
        }
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: Self.contentType)
        fields.append(name: "Cache-Control", value: "no-store")
        return Response(status: 200, fields: fields, body: registry.emitToBuffer())
    }
}
