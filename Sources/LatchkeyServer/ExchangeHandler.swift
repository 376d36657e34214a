import LatchkeyHTTP
import LatchkeyTLS

/// Receives one request's body and the connection's news while its response is being
/// made. Implemented by the proxy; called on the loop only.
public protocol ExchangeHandler: AnyObject {
    /// A piece of the request body, valid only during the call.
    func requestBody(_ bytes: UnsafeRawBufferPointer)
    /// The request body is complete (called also for requests without a body).
    func requestBodyEnded()
    /// The response buffer fell below its low-water mark after `sendBody` returned false.
    func responseDrained()
    /// The exchange ended before its response was finished: stop work for it. Nothing more
    /// will be sent.
    func exchangeAborted(_ reason: ExchangeEnd)
    /// A relayed tunnel this exchange opened has ended; the exchange's byte counts are final.
    func tunnelEnded(_ end: TunnelEnd)
}

extension ExchangeHandler {
    /// Handlers that never open a relay have nothing to record.
    public func tunnelEnded(_ end: TunnelEnd) {}
}

/// Why an exchange ended early.
public enum ExchangeEnd: Sendable {
    /// The client closed, reset or stalled, or the connection failed.
    case clientGone
    /// The server refused the request body (malformed, too large) and answers it itself,
    /// logging it as a server answer.
    case requestRejected
}

/// Makes the handler for each request head. One per loop, owned by the caller.
public protocol ServerHandler: AnyObject {
    func handle(_ exchange: ServerExchange) -> ExchangeHandler
    /// A request the server answered itself (malformed, over the limits, over capacity),
    /// for the access log.
    func serverAnswered(_ exchange: ServerExchange)
    /// A client connection on `listener` opened or closed, or was refused (for the counts).
    func connection(_ event: ConnectionEvent, on listener: ListenerInfo)
    /// A client's TLS handshake on a TLS listener, or inside an intercepted CONNECT tunnel
    /// to `tunnel`, completed or failed (for the log and the metrics); a failed one's
    /// connection is closed.
    func tlsHandshake(_ outcome: TLSHandshakeOutcome, on listener: ListenerInfo, peer: SocketAddress?, tunnel: TargetAuthority?)
}

extension ServerHandler {
    /// Handlers of plain-HTTP listeners only (the login's redirect receiver) have nothing
    /// to record.
    public func tlsHandshake(_ outcome: TLSHandshakeOutcome, on listener: ListenerInfo, peer: SocketAddress?, tunnel: TargetAuthority?) {}
}

public enum TLSHandshakeOutcome: Sendable, Equatable {
    case completed(TLSConnectionInfo)
    case failed(TLSHandshakeFailure)
}

/// What happened to a client connection.
public enum ConnectionEvent: Sendable {
    case opened
    case closed
    /// Over the connection cap: answered 503 `over_capacity` and closed without being read.
    case refusedOverCapacity
}

/// Per-connection limits and timeouts.
public struct ConnectionSettings: Sendable {
    public var http: HTTPLimits
    public var headTimeout: Duration
    public var idleTimeout: Duration
    /// Time the server waits for a whole request body (paused time excluded): a body
    /// trickled to keep a connection open is refused with 408 when it runs out.
    public var bodyTimeout: Duration
    /// Longest silence both ways through a relayed CONNECT tunnel before it is closed
    /// (nginx's stream `proxy_timeout`, 10 minutes by default): far longer than a kept-alive
    /// connection's idle time, since a tunnel may carry a long poll or a slow job.
    public var tunnelIdleTimeout: Duration
    /// Longest silence both ways through an upgraded connection (a WebSocket) before it is
    /// closed; nil for none, the default.
    public var upgradeIdleTimeout: Duration?
    /// Client connections for the process, across all loops (503 beyond).
    public var maxConnections: Int
    /// Buffered response bytes above which `sendBody` asks the producer to wait.
    public var outboundHighWater: Int
    /// Largest request body accepted (413 beyond); nil for no limit.
    public var maxRequestBodyBytes: UInt64?
    /// False: each connection carries one request and closes after its response, whatever
    /// the client asked (the login's redirect receiver, whose port must close with it).
    public var keepAlive: Bool
    /// A request body the handler keeps taking is read on, a buffer at a time, until the
    /// socket is drained or this much has been read in one turn: a 64 KiB upload then
    /// reaches the upstream in one hand-over instead of one per 16 KiB loop turn, and one
    /// fast uploader still leaves the loop to the other connections.
    public var readBudgetPerTurn: Int

    public init(
        http: HTTPLimits = .init(), headTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
        bodyTimeout: Duration = .seconds(60), tunnelIdleTimeout: Duration = .seconds(600), upgradeIdleTimeout: Duration? = nil,
        maxConnections: Int = 10_000,
        outboundHighWater: Int = 256 * 1024, maxRequestBodyBytes: UInt64? = nil, keepAlive: Bool = true,
        readBudgetPerTurn: Int = 256 * 1024
    ) {
        self.http = http
        self.headTimeout = headTimeout
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.tunnelIdleTimeout = tunnelIdleTimeout
        self.upgradeIdleTimeout = upgradeIdleTimeout
        self.maxConnections = maxConnections
        self.outboundHighWater = outboundHighWater
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.keepAlive = keepAlive
        self.readBudgetPerTurn = readBudgetPerTurn
    }
}
