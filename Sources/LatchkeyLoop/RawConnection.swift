/// A connected, non-blocking byte stream on a loop: the far side of a relayed CONNECT
/// tunnel now, of an upgraded stream later. Whoever made it (libcurl's connect-only
/// transfer, a plain socket) keeps its own state behind these calls: the relay only moves
/// bytes and asks for readiness.
public protocol RawConnection: AnyObject {
    /// From now on, reports the connection's readiness for `events` to `handler` on the
    /// loop; `[]` stops every report, a hang-up's included.
    func watch(_ events: IOEvents, handler: IOHandler) throws(SystemError)
    /// Bytes read into `buffer`: nil when none are ready, 0 when the peer finished sending.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int?
    /// Whether bytes may wait inside the connection that its descriptor's readiness does not
    /// show (decrypted TLS records): such a connection is read until `receive` says nil.
    var mayHoldReadBytes: Bool { get }
    /// Bytes taken from `bytes`: nil when none could be taken now.
    func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int?
    /// Whether `finishSending` can tell the peer that nothing more follows while the other
    /// way stays open: not over a TLS session libcurl holds, which has no call for it.
    var canHalfClose: Bool { get }
    /// Nothing more will be sent (a half close, RFC 9293 §3.6).
    func finishSending()
    /// Stops the reports and releases the connection; no call follows.
    func close()
}
