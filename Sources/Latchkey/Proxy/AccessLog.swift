import LatchkeyLogging
import LatchkeyLoop
import LatchkeyServer
import LatchkeyTLS

/// One line per request: method, route, status, bytes in and out, total and upstream
/// time, and on a TLS listener the protocol and the client certificate's subject. The
/// path's secret query values are redacted; headers are never logged.
///
/// Access lines go straight to the log sink in a fixed field order rather than through
/// swift-log's metadata dictionary: at tens of thousands of requests a second, building
/// and sorting that dictionary was a tenth of the proxy's CPU. Same sink, same format,
/// same masking of secrets as every other log line.
struct AccessLog: Sendable {
    let sink: LogSink?
    let enabled: Bool
    /// Redacted when no route matched (the route's own list is used otherwise).
    let secretQueryParameters: Set<String>

    func record(
        _ exchange: ServerExchange, route: Route?, now: LoopInstant, upstreamTime: Duration?,
        outcome: String? = nil
    ) {
        guard enabled, let sink else { return }
        var fields: [(key: String, value: LogValue)] = []
        fields.reserveCapacity(14)
        fields.append(("method", .string(exchange.head.method)))
        fields.append(("path", .string(Self.redactedTarget(exchange.head.target, secret: route?.secretQueryParameters ?? secretQueryParameters))))
        // Inside an intercepted tunnel the path is origin-form: the tunnel names the host.
        if let tunnel = exchange.tunnelAuthority { fields.append(("host", .string(tunnel.host))) }
        if let route { fields.append(("route", .string(route.name))) }
        fields.append(("status", .integer(Int64(exchange.aborted && exchange.status == nil ? 499 : exchange.status ?? 0))))
        fields.append(("bytes_in", .integer(Int64(exchange.requestBodyBytes))))
        fields.append(("bytes_out", .integer(Int64(exchange.responseBodyBytes))))
        fields.append(("duration_ms", LogValue(milliseconds: now.since(exchange.receivedAt))))
        if let upstreamTime { fields.append(("upstream_ms", LogValue(milliseconds: upstreamTime))) }
        if let peer = exchange.peer?.host { fields.append(("client", .string(peer))) }
        if let tls = exchange.tls { Self.append(tls, to: &fields) }
        fields.append(("listener", .integer(Int64(exchange.listener.index))))
        if exchange.aborted || outcome != nil { fields.append(("outcome", .string(outcome ?? "aborted"))) }
        sink.write(label: "latchkey.access", message: "request", fields: fields)
    }

    /// `tls` ("TLSv1.3") and, with mTLS, `client_subject` ("CN=svc,O=example").
    static func append(_ tls: TLSConnectionInfo, to fields: inout [(key: String, value: LogValue)]) {
        fields.append(("tls", .string(tls.protocolVersion)))
        if let subject = tls.clientSubject { fields.append(("client_subject", .string(subject))) }
    }

    /// The request target with the values of secret query parameters replaced. A client
    /// may also send its own secrets in a query; the route lists those names.
    static func redactedTarget(_ target: String, secret: Set<String>) -> String {
        guard !secret.isEmpty, let mark = target.firstIndex(of: "?") else { return target }
        return target[..<mark] + "?" + QueryString.redacting(target[target.index(after: mark)...], secret: secret)
    }
}
