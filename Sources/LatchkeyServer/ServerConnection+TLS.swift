import LatchkeyLoop
import LatchkeyTLS

/// The TLS handshake of a TLS listener's connection, driven by readiness events until it
/// completes or fails; reported to the handler once either way.
extension ServerConnection {
    func continueHandshake() {
        guard let tls else { return }
        if !tls.hasStarted, !isTLSClient() { return }
        switch tls.handshake() {
        case .completed(let info):
            tlsInfo = info
            machine.handshakeCompleted(at: loop.now)
            server.handler.tlsHandshake(.completed(info), on: listener, peer: peer, tunnel: tunnelAuthority)
            // A request may have come right behind the client's Finished.
            readInput()
            if !machine.isClosed { updateInterest() }
        case .wantRead:
            setInterest(.readable)
        case .wantWrite:
            // Writable only: unread client bytes would report readable on every turn, and
            // epoll reports a reset or hang-up without interest.
            setInterest(.writable)
        case .failed(let failure):
            handshakeFailed(failure)
        }
    }

    /// Looks at the first byte before OpenSSL reads it: a TLS client starts with a
    /// handshake record. Returns false when the handshake must not go on: nothing came
    /// yet, the client left, or it spoke plain HTTP (answered here).
    private func isTLSClient() -> Bool {
        var first: UInt8 = 0
        let count: Int?
        do {
            count = try withUnsafeMutableBytes(of: &first) { byte throws(SystemError) in try socket.peek(into: byte) }
        } catch {
            handshakeFailed(TLSHandshakeFailure(.closed, detail: "the connection failed before the handshake: \(error)"))
            return false
        }
        switch count {
        case nil:
            return false
        case 0:
            handshakeFailed(TLSHandshakeFailure(.closed, detail: "the client closed the connection without sending anything"))
            return false
        default:
            guard first != ConnectionMachine.tlsHandshakeRecord else { return true }
            if tunnelAuthority != nil { return servePlainInTunnel() }
            refusePlainHTTP()
            return false
        }
    }

    /// Plain HTTP inside an intercepted tunnel (a `ws://` or `http://` client that tunnels
    /// everything through CONNECT): no TLS there, requests are served as they come.
    private func servePlainInTunnel() -> Bool {
        tls = nil
        machine.handshakeCompleted(at: loop.now)
        readInput()
        if !machine.isClosed { updateInterest() }
        return false
    }

    /// Plain HTTP on the TLS port: the refusal goes out in plain HTTP, so the session is
    /// dropped and the connection answers like a plain one, then closes.
    private func refusePlainHTTP() {
        tls = nil
        server.handler.tlsHandshake(.failed(TLSHandshakeFailure(.plainHTTP, detail: "the client spoke plain HTTP")), on: listener, peer: peer,
                                    tunnel: tunnelAuthority)
        answerUnparsed(machine.plainHTTPArrived())
    }

    func handshakeFailed(_ failure: TLSHandshakeFailure) {
        server.handler.tlsHandshake(.failed(failure), on: listener, peer: peer, tunnel: tunnelAuthority)
        close()
    }
}
