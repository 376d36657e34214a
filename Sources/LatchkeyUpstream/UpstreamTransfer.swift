/// One request/response exchange with an upstream, as its delegate (the proxy's client
/// connection) drives it. Two kinds, chosen per route (`UpstreamPath`): libcurl's full
/// transfer (`CurlTransfer`), and Latchkey's own HTTP/1.1 exchange over a pooled connection
/// libcurl opened (`HTTP1Transfer`). Loop-bound, like the client that starts it.
///
/// The delegate hears the head, the body with backpressure, requests for more body and one
/// finish (`UpstreamTransferDelegate`); `cancel()` is final and silent.
public protocol UpstreamTransfer: AnyObject {
    /// Queues request-body bytes (copied). Ignored after `finishBody()`, once finished, or
    /// for a transfer without a body.
    func sendBody(_ bytes: UnsafeRawBufferPointer)

    /// End of the request body.
    func finishBody()

    /// Request-body bytes queued and not yet sent. Stop reading the client at
    /// `UpstreamBody.highWater`; `upstreamWantsBody` says when to read again.
    var queuedBodyBytes: Int { get }

    /// Lifts the backpressure pause asked for by returning false from
    /// `upstreamDidReceiveBody`. Held bytes may be delivered before this returns.
    func resumeReceiving()

    /// The client went away: aborts the transfer. The delegate is released at once and
    /// hears nothing more — no `upstreamDidFinish`. The connection, if mid-response, is
    /// closed.
    func cancel()

    /// Start → finish (or cancel), for the access log.
    var upstreamTime: Duration? { get }
    /// Request-body bytes sent (or queued to be).
    var bytesSent: UInt64 { get }
    /// Response-body bytes handed to the delegate.
    var bytesReceived: UInt64 { get }
    /// The connections it went on so far.
    var connectionUse: ConnectionUse { get }
}

extension UpstreamBody {
    /// Request-body bytes queued above which the delegate stops reading its client; a body
    /// of known length reserves room for up to this many at the start.
    public static let highWater = 256 * 1024
}
