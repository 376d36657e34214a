import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyTLS

/// CONNECT tunnels: the `200`, then interception (the client's TLS ends here and its
/// requests are served as exchanges) or a relay (`ServerConnection+Relay.swift`).
extension ServerConnection {
    func openTunnel(_ exchange: ServerExchange, _ tunnel: Tunnel) {
        guard exchange === self.exchange, !exchange.finished, machine.tunnelOpened(tunnel.kind) else {
            tunnel.upstream?.close()
            return
        }
        switch tunnel {
        case .intercept, .relay:
            exchange.record.status = 200
            // RFC 9110 §9.3.6: no body and no framing fields in a 2xx to CONNECT.
            ResponseHeadEncoder.encode(status: 200, fields: HTTPFields(), into: &output)
        case .upgrade(_, let fields, let early, _):
            exchange.record.status = 101
            ResponseHeadEncoder.encode(status: 101, fields: fields, into: &output)
            // The new protocol's first bytes leave with the head.
            output.append(contentsOf: early)
            exchange.record.responseBodyBytes += UInt64(early.count)
        }
        pendingTunnel = tunnel
        if case .intercept = tunnel {
            // The CONNECT itself is over: the requests inside are exchanges of their own.
            exchange.record.finished = true
            handler = nil
            exchange.connection = nil
            self.exchange = nil
        }
        scheduleFlush()
    }

    /// The answer has been written: the tunnel starts.
    func startTunnel() {
        guard let tunnel = pendingTunnel else { return close() }
        pendingTunnel = nil
        switch tunnel {
        case .intercept(let context, let authority):
            startInterception(context, authority: authority)
        case .relay(let upstream):
            startRelay(upstream, webSocket: false)
        case .upgrade(let upstream, _, let early, let webSocket):
            startRelay(upstream, webSocket: webSocket, early: early)
        }
    }

    /// The client's TLS handshake comes next, with a certificate for the tunnel's host.
    private func startInterception(_ context: TLSServerContext, authority: TargetAuthority) {
        tunnelAuthority = authority
        // A client waits for the 200 before its ClientHello (RFC 9110 §9.3.6): bytes that
        // came earlier were read as HTTP and cannot be handed to OpenSSL.
        guard !hasBufferedInput else {
            return handshakeFailed(TLSHandshakeFailure(.other, detail: "the client sent bytes before the CONNECT was answered"))
        }
        do {
            tls = try TLSSession(context: context, fd: socket.fd)
        } catch {
            return handshakeFailed(TLSHandshakeFailure(.other, detail: "cannot start TLS: \(error)"))
        }
        releaseReaderIfIdle()
        machine.interceptionStarted(at: loop.now, handshakeTimeout: server.settings.headTimeout)
        updateInterest()
        updateTimer()
    }
}

extension Tunnel {
    /// The upstream connection a relayed tunnel owns.
    var upstream: RawConnection? {
        switch self {
        case .intercept: nil
        case .relay(let upstream), .upgrade(let upstream, _, _, _): upstream
        }
    }
}
