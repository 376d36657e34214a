import COpenSSL

/// The TLS side of one accepted client connection: an SSL object on the connection's
/// non-blocking socket, driven by the connection's loop (loop-bound, never shared). Every
/// call returns at once; `wantRead` / `wantWrite` say which readiness to wait for.
public final class TLSSession {
    public enum HandshakeResult: Equatable {
        case completed(TLSConnectionInfo)
        case wantRead
        case wantWrite
        case failed(TLSHandshakeFailure)
    }

    public enum Transfer: Equatable {
        /// This many bytes were read or written (> 0).
        case bytes(Int)
        case wantRead
        case wantWrite
        /// The connection is over: close_notify, end of stream, or a fatal error.
        case closed
    }

    let ssl: OpaquePointer
    /// The context this connection began with, kept alive with it (a reload may replace
    /// the listener's).
    public let context: TLSServerContext
    /// False once a fatal error happened: RFC 8446 §6.2 forbids a close_notify after one,
    /// and OpenSSL must not be called on the connection again.
    private var usable = true

    /// SSL_new + SSL_set_fd + SSL_set_accept_state. The socket stays the caller's to close.
    public init(context: TLSServerContext, fd: Int32) throws(TLSError) {
        OpenSSLErrors.clear()
        guard let ssl = SSL_new(context.context) else {
            throw TLSError(.setup, "SSL_new failed (\(OpenSSLErrors.drainReasons()))")
        }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            throw TLSError(.setup, "SSL_set_fd failed (\(OpenSSLErrors.drainReasons()))")
        }
        SSL_set_accept_state(ssl)
        self.ssl = ssl
        self.context = context
    }

    deinit {
        SSL_free(ssl)
    }

    /// Nothing of the handshake was read yet (SSL_in_before): the first byte may still be
    /// looked at to tell a TLS client from a plain-HTTP one.
    public var hasStarted: Bool { SSL_in_before(ssl) == 0 }

    /// SSL_do_handshake: one step, as far as the socket allows.
    public func handshake() -> HandshakeResult {
        guard usable else { return .failed(TLSHandshakeFailure(.closed, detail: "the connection already failed")) }
        OpenSSLErrors.clear()
        let status = SSL_do_handshake(ssl)
        if status == 1 { return .completed(info) }
        switch SSL_get_error(ssl, status) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case let error:
            usable = false
            return .failed(failure(sslError: error))
        }
    }

    /// SSL_read: decrypted application bytes into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Transfer {
        transfer { SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &$0) }
    }

    /// SSL_write (partial writes enabled): how much of `bytes` went out. After `wantWrite`
    /// the next call must start with the same bytes (they may have moved).
    public func write(_ bytes: UnsafeRawBufferPointer) -> Transfer {
        transfer { SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &$0) }
    }

    /// Decrypted bytes wait inside OpenSSL (SSL_pending): the socket will not report them
    /// readable, so a reader that stopped for backpressure must read again on its own.
    public var hasBufferedInput: Bool { usable && SSL_pending(ssl) > 0 }

    /// Sends close_notify (RFC 8446 §6.1) once, best effort, without waiting for the
    /// client's: the connection is being closed anyway.
    public func shutdown() {
        guard usable, SSL_is_init_finished(ssl) == 1, SSL_get_shutdown(ssl) & SSL_SENT_SHUTDOWN == 0 else { return }
        OpenSSLErrors.clear()
        _ = SSL_shutdown(ssl)
        OpenSSLErrors.clear()
    }

    /// The response was cut short: no close_notify will follow (SSL_set_quiet_shutdown), so
    /// that a client reading to the end of the stream sees a truncation, not a complete
    /// answer (RFC 8446 §6.1, RFC 9112 §9.8). Bytes already queued still go out.
    public func abandon() {
        SSL_set_quiet_shutdown(ssl, 1)
    }

    /// One SSL_read_ex / SSL_write_ex, which sets the byte count and returns 1 on success.
    @inline(__always)
    private func transfer(_ call: (inout Int) -> Int32) -> Transfer {
        guard usable else { return .closed }
        OpenSSLErrors.clear()
        var count = 0
        let status = call(&count)
        return status == 1 ? .bytes(count) : transferFailed(status)
    }

    private func transferFailed(_ status: Int32) -> Transfer {
        switch SSL_get_error(ssl, status) {
        case SSL_ERROR_WANT_READ:
            return .wantRead
        case SSL_ERROR_WANT_WRITE:
            return .wantWrite
        case SSL_ERROR_ZERO_RETURN:
            // close_notify: the client may still read our close_notify in reply.
            return .closed
        default:
            usable = false
            OpenSSLErrors.clear()
            return .closed
        }
    }
}
