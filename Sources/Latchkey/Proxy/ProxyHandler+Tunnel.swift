import LatchkeyServer

/// A forward listener's CONNECT, once admitted: intercepted with a certificate for its
/// host, or relayed to a `tunnel:` host.
extension ProxyHandler {
    func openTunnel(_ plan: Admission.TunnelPlan, for exchange: ServerExchange, in context: ProxyContext) -> ExchangeHandler {
        switch plan {
        case .intercept(let authority):
            guard let interception = context.interception else {
                // Forward listeners cannot be added by a reload: one exists from the start.
                conclude(exchange, .refused(ErrorDocument(status: 503, error: "interception_failed",
                                                          message: "this process has no local certificate authority", host: authority.host)),
                         in: context)
                return LocalAnswer.shared
            }
            do {
                let tls = try interception.context(for: authority.host)
                exchange.openTunnel(.intercept(tls, authority: authority))
                conclude(exchange, .tunneled(outcome: "intercepted"), in: context)
            } catch {
                context.logger.error("cannot make a certificate for an intercepted host", metadata: [
                    "host": .string(authority.host), "error": .string(error.description),
                ])
                conclude(exchange, .refused(ErrorDocument(status: 502, error: "interception_failed",
                                                          message: "cannot make a certificate for \(authority.host)", host: authority.host)),
                         in: context)
            }
            return LocalAnswer.shared
        case .relay(let authority):
            let relay = TunnelRelay(exchange: exchange, authority: authority, handler: self, context: context)
            relay.start()
            return relay
        }
    }
}
