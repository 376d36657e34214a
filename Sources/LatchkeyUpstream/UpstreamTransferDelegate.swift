import LatchkeyHTTP

/// The consumer of one transfer: the proxy's client connection. All calls happen on the
/// transfer's loop.
public protocol UpstreamTransferDelegate: AnyObject {
    /// The final (non-1xx) response head. `fields` are exactly as the upstream sent them, in
    /// order with duplicates; a decoded `Transfer-Encoding` is still listed, so the caller
    /// re-frames. May be called from inside a curl callback or a read of the connection:
    /// calling `cancel()` here is allowed (it takes effect after the callback). Consuming:
    /// the caller gives its fields up, so that the proxy edits them in place (hop-by-hop
    /// fields removed) rather than copying them. `declared`: what the fields say of the
    /// body's framing, read once where the head was parsed.
    func upstreamDidReceiveHead(_ transfer: UpstreamTransfer, status: Int, fields: consuming HTTPFields,
                                declared: DeclaredFraming)

    /// Body bytes, chunked framing already removed. The bytes are valid only during
    /// the call: copy them. Return false to receive no more until `resumeReceiving()`
    /// (backpressure); the bytes of this call are consumed either way.
    func upstreamDidReceiveBody(_ transfer: UpstreamTransfer, _ bytes: UnsafeRawBufferPointer) -> Bool

    /// The upstream takes request-body bytes and none are queued: resume reading from the
    /// client. Called from the loop (never inside a call the caller made), once per stall.
    func upstreamWantsBody(_ transfer: UpstreamTransfer)

    /// Called exactly once per transfer that was not cancelled, from the loop (never from
    /// inside a curl callback or from inside a call the caller made on the transfer).
    /// `error == nil` means the response is complete. After `cancel()` it is not called.
    func upstreamDidFinish(_ transfer: UpstreamTransfer, error: UpstreamError?)
}
