import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyServer
import LatchkeyUpstream

extension ProxyExchange {
    /// The upstream refused the token and the body is kept: renew it and send the request
    /// again with the new one, once.
    func renewAndReplay(after refused: UpstreamTransfer) {
        guard let identity, let token else { return }
        metrics.tokenRenewed()
        metrics.tokenReplayed()
        cancel(refused)
        handler.logger.info("upstream refused the token; renewing and replaying", metadata: [
            "route": .string(route.name), "identity": .string(identity.name),
        ])
        wait { identity.rejected(generation: token.generation, $0) }
    }

    /// The upstream refused a token that cannot be renewed (a static one).
    func rejectToken(_ refused: UpstreamTransfer) {
        cancel(refused)
        let name = identity?.name ?? ""
        answer(ErrorDocument(status: 401, error: "token_rejected",
                             message: "the upstream refused the token of identity \(name), which cannot be renewed; store a new one",
                             route: route.name))
    }

    /// The upstream refused the token but the body was too large to keep: this answer goes
    /// to the client, the next request gets a renewed token.
    func renewForNextRequest() {
        guard let identity, let token else { return }
        metrics.tokenRenewed()
        identity.rejected(generation: token.generation) { _ in }
    }

    /// Sends the client an answer that was held while its body was read (it did not refuse
    /// the token, or this request cannot be sent again): its head, then the held bytes.
    /// Returns false when the client's buffer is over its high-water mark.
    @discardableResult
    func relay(_ held: ExchangeMachine.HeldAnswer, renewedForNextRequest: Bool) -> Bool {
        // Only a head whose framing is valid is held (`framingValid`).
        relayHead(status: held.status, fields: held.fields, declared: DeclaredFraming(held.fields),
                  renewedForNextRequest: renewedForNextRequest)
        return held.body.withUnsafeBytes { exchange.sendBody($0) }
    }

    /// Stops reading the body and asks for a token; the answer comes back on this loop.
    func wait(_ ask: (@escaping Identity.Waiter) -> Void) {
        exchange.pauseRequestBody()
        waitForToken(on: handler.loop.handle, ask)
    }

    func tokenArrived(_ result: Result<IssuedToken, IdentityUnavailable>) {
        let token = try? result.get()
        switch machine.tokenArrived(route.canInject(token)) {
        case .ignore:
            return
        case .startTransfer(let start):
            startTransfer(start, token: token)
            exchange.resumeRequestBody()
        case .refuse:
            guard let identity, let refusal = route.refusal(for: result, identity: identity.name) else { return }
            answer(refusal.document, extraFields: refusal.fields)
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
