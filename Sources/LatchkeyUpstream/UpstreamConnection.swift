import CCurlShims
import LatchkeyLoop
#if canImport(Glibc)
import Glibc
#endif

/// A connection libcurl opens and then hands over (CURLOPT_CONNECT_ONLY): DNS, connect,
/// TLS for https and any proxy with the route's settings, then raw bytes through
/// curl_easy_send and curl_easy_recv. The far side of a relayed CONNECT tunnel; later, of
/// upgraded streams and of exchanges Latchkey frames itself.
///
/// The easy handle stays in the multi for as long as the connection is used (curl_easy_send
/// and curl_easy_recv refuse to work otherwise) and leaves it on `close`, which closes the
/// connection (curl 7.86 and later). Its socket's readiness goes to the relay's handler
/// through `MultiEvents`, which owns every registration of curl's sockets.
///
/// curl's receive buffer (CURLOPT_BUFFERSIZE, 16 KiB by default): libcurl 7.88 mallocs it
/// as the connection starts (Curl_preconnect) and frees it once connected (multi_done), so
/// a connection in use or idle in the pool has none. curl_easy_recv reads at most that many
/// bytes per call (Curl_read): over TLS it keeps its size, or every read would take several
/// calls. A plain connection, read and written through its socket (`readsSocketItself`),
/// takes the smallest (1024 bytes, enough for a SOCKS handshake, its one use while
/// connecting): the 16 KiB blocks freed behind every new connection stayed in the heap as
/// holes that long-lived objects around them kept from being returned.
///
/// Loop-bound, like its client.
public final class UpstreamConnection: RawConnection {
    unowned let client: UpstreamClient
    /// Nil once closed.
    @exclusivity(unchecked) private(set) var easy: CurlEasy?
    /// Nil once it connected, failed or was closed: it hears once.
    @exclusivity(unchecked) private weak var delegate: UpstreamConnectionDelegate?
    /// The socket, once connected.
    @exclusivity(unchecked) private var fd: Int32 = -1
    /// TLS to the upstream (an https URL): curl may hold decrypted bytes.
    public let mayHoldReadBytes: Bool
    /// Plain TCP end to end (no TLS to the upstream or to an https proxy): bytes go through
    /// the socket itself. libcurl 7.88's curl_easy_send and curl_easy_recv look the
    /// connection up in the multi's whole connection cache on every call, a cost that
    /// grows with every other connection open; on a plain socket curl holds nothing, so
    /// nothing is lost by going around it.
    let readsSocketItself: Bool

    init(client: UpstreamClient, easy: CurlEasy, delegate: UpstreamConnectionDelegate, overTLS: Bool, proxyOverTLS: Bool) {
        self.client = client
        self.easy = easy
        self.delegate = delegate
        mayHoldReadBytes = overTLS
        readsSocketItself = !overTLS && !proxyOverTLS
    }

    // MARK: from the client

    /// The connect-only transfer finished: connected, or `error`.
    func connectFinished(error: UpstreamError?) {
        guard let delegate, let easy else { return }
        self.delegate = nil
        if let error {
            close()
            return delegate.upstreamConnectFailed(self, error: error)
        }
        var socket: curl_socket_t = CURL_SOCKET_BAD
        guard lk_curl_easy_getinfo_socket(easy.handle, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK, socket != CURL_SOCKET_BAD else {
            close()
            return delegate.upstreamConnectFailed(self, error: UpstreamError(.other, detail: "curl has no socket for the connection"))
        }
        fd = socket
        delegate.upstreamConnected(self)
    }

    // MARK: RawConnection

    public func watch(_ events: IOEvents, handler: IOHandler) throws(SystemError) {
        guard easy != nil, fd >= 0 else { throw SystemError(call: "epoll_ctl", errno: EBADF) }
        try client.events.handOver(fd, events: events, to: handler)
    }

    /// recv(2) on a plain connection, else curl_easy_recv.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        guard let easy else { throw SystemError(call: "curl_easy_recv", errno: EBADF) }
        if readsSocketItself {
            do {
                return try systemCall("recv") { recv(fd, buffer.baseAddress, buffer.count, 0) }
            } catch where error.wouldBlock {
                return nil
            }
        }
        var count = 0
        switch curl_easy_recv(easy.handle, buffer.baseAddress, buffer.count, &count) {
        case CURLE_OK: return count
        case CURLE_AGAIN: return nil
        default: throw SystemError(call: "curl_easy_recv", errno: ECONNRESET)
        }
    }

    /// send(2) with MSG_NOSIGNAL on a plain connection, else curl_easy_send.
    public func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int? {
        guard let easy else { throw SystemError(call: "curl_easy_send", errno: EBADF) }
        if readsSocketItself {
            do {
                return try systemCall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
            } catch where error.wouldBlock {
                return nil
            }
        }
        var count = 0
        switch curl_easy_send(easy.handle, bytes.baseAddress, bytes.count, &count) {
        case CURLE_OK: return count
        case CURLE_AGAIN: return nil
        default: throw SystemError(call: "curl_easy_send", errno: EPIPE)
        }
    }

    public var canHalfClose: Bool { !mayHoldReadBytes }

    /// shutdown(SHUT_WR) on curl's socket: curl has no call for a half close, and on a plain
    /// connection it has nothing buffered to send first. Over TLS a FIN without close_notify
    /// would read as a cut: nothing is done (`canHalfClose`), and `close` ends the session.
    public func finishSending() {
        guard easy != nil, fd >= 0, canHalfClose else { return }
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Also cancels a connection still being made; its delegate hears nothing more.
    public func close() {
        delegate = nil
        guard let easy else { return }
        self.easy = nil
        fd = -1
        client.release(connection: self, easy: easy)
    }
}

/// Hears once how a connect-only transfer ended, from the loop (never inside curl).
public protocol UpstreamConnectionDelegate: AnyObject {
    func upstreamConnected(_ connection: UpstreamConnection)
    func upstreamConnectFailed(_ connection: UpstreamConnection, error: UpstreamError)
}
