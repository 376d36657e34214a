import LatchkeyServer

extension ProxyHandler {
    /// Every handshake is counted; a failed one is logged, throttled.
    func tlsHandshake(_ outcome: TLSHandshakeOutcome, on listener: ListenerInfo, peer: SocketAddress?) {
        let context = context
        context.metrics.tlsHandshakes.record(outcome, listener: listener.index)
        guard case .failed(let failure) = outcome else { return }
        context.tlsFailureLog.record(failure, listener: context.policies[listener.index].name, peer: peer, now: loop.now)
    }
}
