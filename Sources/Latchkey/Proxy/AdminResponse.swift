import LatchkeyHTTP
import LatchkeyServer

/// The answer of one of the proxy's own read-only endpoints (`/.latchkey/metrics`,
/// `/.latchkey/identities`), which the handler serves after the listener's Host and
/// inbound checks.
struct AdminResponse {
    var status: Int
    var fields: HTTPFields
    var body: [UInt8]

    /// Whether a request's path is the endpoint's `own`: the length comparison first
    /// spares every other request a string comparison.
    static func isPath(_ path: Substring, _ own: String) -> Bool {
        path.utf8.count == own.utf8.count && path == own
    }

    /// A JSON answer (health, readiness).
    static func json(status: Int, body: [UInt8]) -> AdminResponse {
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: "application/json")
        return AdminResponse(status: status, fields: fields, body: body)
    }

    /// `body()` for GET and HEAD (the server leaves out a HEAD response's body); 405 with
    /// `Allow` for any other method (RFC 9110 §15.5.6). `endpoint` names it in the error.
    static func readOnly(method: String, endpoint: String, contentType: String, body: () -> [UInt8]) -> AdminResponse {
        guard method == "GET" || method == "HEAD" else {
            let document = ErrorDocument(status: 405, error: "method_not_allowed", message: "\(endpoint) answers GET and HEAD")
            var fields = document.fields
            fields.append(name: "Allow", value: "GET, HEAD")
            return AdminResponse(status: document.status, fields: fields, body: document.body)
        }
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: contentType)
        fields.append(name: "Cache-Control", value: "no-store")
        return AdminResponse(status: 200, fields: fields, body: body())
    }
}
