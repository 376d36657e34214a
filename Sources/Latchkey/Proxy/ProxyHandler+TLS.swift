import LatchkeyHTTP
import LatchkeyServer

extension ProxyHandler {
    /// Every handshake is counted; a failed one is logged, throttled, naming the host of
    /// an intercepted tunnel.
    func tlsHandshake(_ outcome: TLSHandshakeOutcome, on listener: ListenerInfo, peer: SocketAddress?, tunnel: TargetAuthority?) {
        let context = context
        context.metrics.tlsHandshakes.record(outcome, listener: listener.index)
        guard case .failed(let failure) = outcome else { return }
        context.tlsFailureLog.record(failure, listener: context.policies[listener.index].name, peer: peer, interceptedHost: tunnel?.host,
                                     now: loop.now)
    }
}
