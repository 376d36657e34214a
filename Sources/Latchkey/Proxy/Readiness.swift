import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyServer

/// `GET /.latchkey/ready`, beside `/.latchkey/health`: health says the process is alive,
/// ready says it can serve, as Kubernetes' readiness probe means it: every identity has
/// read its stored token (until then its requests wait), and the token store can be
/// reached. An identity that needs `latchkey login` does not make the process unready:
/// another replica would need the same login, and the other routes still serve.
struct Readiness: Sendable {
    static let path = "/.latchkey/ready"

    /// The store whose server may be away (Redis); nil for one that is always there.
    let store: (any AvailabilityReportingStore)?
    let identities: [Identity]

    /// 200 `{"status":"ready"}`, or 503 with a reason code and a message for people. The
    /// message names no server: the probe answers without credentials (the log has the
    /// details).
    func answer() -> (status: Int, body: [UInt8]) {
        if let waiting = identities.first(where: { !$0.hasStarted }) {
            return notReady("starting", "identity \(waiting.name) is still reading the token store")
        }
        if case .unavailable? = store?.availability {
            return notReady("token_store_unavailable", "the token store cannot be reached; the tokens held in memory are still used")
        }
        return (200, Array("{\"status\":\"ready\"}\n".utf8))
    }

    private func notReady(_ reason: String, _ message: String) -> (status: Int, body: [UInt8]) {
        var body = Array("{\"status\":\"not_ready\",\"reason\":".utf8)
        JSONText.appendQuoted(reason, to: &body)
        body.append(contentsOf: ",\"message\":".utf8)
        JSONText.appendQuoted(message, to: &body)
        body.append(contentsOf: "}\n".utf8)
        return (503, body)
    }
}
