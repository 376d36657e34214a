/// A connected, non-blocking byte stream whose descriptor the loop watches: the far side of
/// a CONNECT tunnel now, of an upgraded stream later. Whoever made it (libcurl's
/// connect-only transfer, a plain socket) keeps its own state behind these calls; the
/// relay only moves bytes.
public protocol RawConnection: AnyObject {
    /// For readiness only: bytes go through `receive` and `send`.
    var fileDescriptor: Int32 { get }
    /// Bytes read into `buffer`: nil when none are ready, 0 when the peer finished sending.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int?
    /// Bytes taken from `bytes`: nil when none could be taken now.
    func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int?
    /// Nothing more will be sent (a half close, RFC 9293 §3.6).
    func finishSending()
    /// Releases the connection; no call follows.
    func close()
}
