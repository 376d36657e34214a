import LatchkeyLoop
import LatchkeyServer
import Logging

/// One line per request: method, route, status, bytes in and out, total and upstream
/// time. The path's secret query values are redacted; headers are never logged.
struct AccessLog: Sendable {
    let logger: Logger
    let enabled: Bool
    /// Redacted when no route matched (the route's own list is used otherwise).
    let secretQueryParameters: Set<String>

    func record(
        _ exchange: ServerExchange, route: Route?, now: LoopInstant, upstreamTime: Duration?,
        outcome: String? = nil
    ) {
        guard enabled else { return }
        var metadata: Logger.Metadata = [
            "method": .string(exchange.head.method),
            "path": .string(Self.redactedTarget(exchange.head.target, secret: route?.secretQueryParameters ?? secretQueryParameters)),
            "status": .stringConvertible(exchange.aborted && exchange.status == nil ? 499 : exchange.status ?? 0),
            "bytes_in": .stringConvertible(exchange.requestBodyBytes),
            "bytes_out": .stringConvertible(exchange.responseBodyBytes),
            "duration_ms": .string(Self.milliseconds(now.since(exchange.receivedAt))),
            "listener": .stringConvertible(exchange.listener.index),
        ]
        if let route { metadata["route"] = .string(route.name) }
        if let upstreamTime { metadata["upstream_ms"] = .string(Self.milliseconds(upstreamTime)) }
        if let peer = exchange.peer?.host { metadata["client"] = .string(peer) }
        if exchange.aborted { metadata["outcome"] = .string(outcome ?? "aborted") } else if let outcome { metadata["outcome"] = .string(outcome) }
        logger.info("request", metadata: metadata)
    }

    /// The request target with the values of secret query parameters replaced. A client
    /// may also send its own secrets in a query; the route lists those names.
    static func redactedTarget(_ target: String, secret: Set<String>) -> String {
        guard !secret.isEmpty, let mark = target.firstIndex(of: "?") else { return target }
        return target[..<mark] + "?" + QueryString.redacting(target[target.index(after: mark)...], secret: secret)
    }

    private static func milliseconds(_ duration: Duration) -> String {
        let ms = duration.milliseconds
        return String(Double(Int(ms * 10)) / 10)
    }
}
