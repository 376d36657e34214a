import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyServer
import LatchkeyUpstream

extension ProxyExchange {
    /// Starts the transfer once the identity has a token: at once when it has one, else
    /// when the token request in flight (single-flight per identity) answers.
    func start() {
        guard let identity else { return startTransfer(token: nil) }
        if let token = identity.current() { return startTransfer(token: token) }
        wait { identity.demand($0) }
    }

    /// The upstream refused the token with this response head (not after a replay: a
    /// renewed token refused again is not the token's fault). Returns true when the
    /// response is to be relayed; false when the exchange has taken over (a replay, or its
    /// own error answer).
    func renewAfterRefusal(of refused: UpstreamTransfer) -> Bool {
        guard let identity, let token else { return true }
        guard identity.renewable else {
            refused.cancel()
            transfer = nil
            answer(ErrorDocument(status: 401, error: "token_rejected",
                                 message: "the upstream refused the token of identity \(identity.name), which cannot be renewed; store a new one",
                                 route: route.name), outcome: "token_rejected")
            return false
        }
        metrics.tokenRenewals?.increment()
        guard body.complete else {
            // Too large to replay: renew for the next request, relay this answer.
            identity.rejected(generation: token.generation) { _ in }
            return true
        }
        metrics.tokenReplays?.increment()
        replayed = true
        refused.cancel()
        transfer = nil
        handler.logger.info("upstream refused the token; renewing and replaying", metadata: [
            "route": .string(route.name), "identity": .string(identity.name),
        ])
        wait { identity.rejected(generation: token.generation, $0) }
        return false
    }

    /// Stops reading the body and asks for a token; the answer comes back on this loop.
    private func wait(_ ask: (@escaping Identity.Waiter) -> Void) {
        exchange.pauseRequestBody()
        let exchange = LoopBound(self)
        let loop = handler.loop.handle
        ask { result in
            loop.execute { _ in exchange.value.tokenArrived(result) }
        }
    }

    private func tokenArrived(_ result: Result<IssuedToken, IdentityUnavailable>) {
        guard !done, let identity else { return }
        switch result {
        case .success(let token):
            startTransfer(token: token)
            exchange.resumeRequestBody()
        case .failure(let unavailable):
            let refusal = IdentityRefusal(unavailable, identity: identity.name, route: route.name)
            answer(refusal.document, extraFields: refusal.fields, outcome: refusal.document.error)
        }
    }
}

extension RenewalPolicy {
    /// Whether this response head says the token is no longer good. Only an error can:
    /// a success that happens to carry a challenge was served, and replaying it would do
    /// its work twice; this also keeps the header search off the path of every 2xx.
    func refuses(status: Int, fields: HTTPFields) -> Bool {
        if statuses.contains(status) { return true }
        guard status >= 400, onInvalidTokenChallenge, let challenge = fields["WWW-Authenticate"] else { return false }
        return Self.isInvalidTokenChallenge(challenge)
    }

    /// RFC 6750 §3: `Bearer realm="x", error="invalid_token"`, any case, with or without quotes.
    static func isInvalidTokenChallenge(_ challenge: String) -> Bool {
        let lowered = challenge.lowercased()
        return lowered.hasPrefix("bearer") && (lowered.contains("error=\"invalid_token\"") || lowered.contains("error=invalid_token"))
    }
}
