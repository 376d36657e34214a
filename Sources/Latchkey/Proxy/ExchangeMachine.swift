/// The life of one proxied request, as a value: events in (a token, the client's body, the
/// upstream's head, body and end, the client gone, a handoff's answer), actions out. No
/// I/O: `ProxyExchange` feeds it and performs what it returns.
///
/// A request is sent at most twice: once, and once more after the upstream refused its
/// token (renewed) or the proxy's cookie session (refilled by the handoff endpoint), and
/// only while every byte of its body is still in `body` (the bounded replay record).
struct ExchangeMachine {
    enum State: Equatable {
        /// No transfer yet: the identity's token is awaited, for the first sending or, with
        /// `replay`, for the second after a renewal.
        case waitingForToken(replay: Bool)
        /// A transfer is running. `replayed`: it is the request's second sending;
        /// `headSent`: its response head went to the client, which has part of the answer.
        case sending(replayed: Bool, headSent: Bool)
        /// The proxy's jar lacked the session: the handoff endpoint is filling it before
        /// the request goes again.
        case refillingJar
        /// A browser's navigation is being handed a web session; the handoff answers it.
        case handingOff
        case done
    }

    /// What the machine must know of the route and the request, fixed at its start.
    struct Plan: Equatable {
        /// The route injects an identity's token (the transfer waits for it).
        var injectsIdentity = false
        /// The identity's token can be renewed (not a static token).
        var renewable = false
        /// A 401 fills the proxy's jar from the handoff endpoint and sends the request
        /// again (`jar: proxy` with a handoff).
        var refillsJarOn401 = false
        /// A 401 hands the browser a web session (a navigation on a route with a handoff
        /// and the client's own jar).
        var handsOffOn401 = false
        /// Bytes of body kept for a second sending; nil when the request is never replayed.
        var replayLimit: Int?
        /// The body's announced length, if any: a larger one than the limit is never kept.
        var declaredLength: UInt64?
    }

    /// A transfer to start, with the body bytes it must be handed at once.
    struct Start: Equatable {
        var pendingBody: [UInt8]
        var bodyEnded: Bool
    }

    private(set) var state: State
    private(set) var body: RequestBodyRecord
    let plan: Plan

    init(plan: Plan) {
        self.plan = plan
        state = .waitingForToken(replay: false)
        body = RequestBodyRecord(replayLimit: plan.replayLimit, declaredLength: plan.declaredLength)
    }

    // MARK: starting

    enum StartAction: Equatable {
        case startTransfer(Start)
        /// Stop reading the client's body and ask the identity for a token.
        case waitForToken
    }

    /// The request was admitted. `tokenAtHand`: the identity has a current token.
    mutating func start(tokenAtHand: Bool) -> StartAction {
        guard plan.injectsIdentity, !tokenAtHand else { return .startTransfer(beginSending(replayed: false)) }
        return .waitForToken
    }

    enum ResumeAction: Equatable {
        /// Start the transfer and read the client's body again.
        case startTransfer(Start)
        /// Answer the client with why there is nothing to send (the identity's refusal, the
        /// handoff's failure).
        case refuse
        /// The exchange is over (the client left meanwhile): nothing to do.
        case ignore
    }

    /// The identity's answer: a token, or none.
    mutating func tokenArrived(_ success: Bool) -> ResumeAction {
        guard case .waitingForToken(let replay) = state else { return .ignore }
        guard success else {
            state = .done
            return .refuse
        }
        return .startTransfer(beginSending(replayed: replay))
    }

    /// The handoff endpoint's answer for the proxy's jar.
    mutating func jarRefilled(_ success: Bool) -> ResumeAction {
        guard state == .refillingJar else { return .ignore }
        guard success else {
            state = .done
            return .refuse
        }
        return .startTransfer(beginSending(replayed: true))
    }

    // MARK: client → upstream

    enum BodyAction: Equatable {
        /// Hand the bytes to the running transfer.
        case forward
        /// Kept for a transfer to come: read no more from the client meanwhile.
        case hold
    }

    mutating func requestBody(_ bytes: UnsafeRawBufferPointer) -> BodyAction {
        switch state {
        case .sending:
            body.append(bytes, sent: true)
            return .forward
        case .waitingForToken, .refillingJar:
            body.append(bytes, sent: false)
            return .hold
        case .handingOff, .done:
            return .hold
        }
    }

    /// Whether the running transfer is to be told that the body is complete.
    mutating func requestBodyEnded() -> Bool {
        body.end()
        if case .sending = state { return true }
        return false
    }

    // MARK: upstream → client

    /// How the upstream's response head is judged.
    struct Head: Equatable {
        var status: Int
        /// The route's renewal policy says the token is no longer good.
        var refusesToken: Bool
        /// Its framing can be relayed (RFC 9112 §6.3: no invalid or conflicting lengths).
        var framingValid: Bool
    }

    enum HeadAction: Equatable {
        /// Send the head to the client. `renewedForNextRequest`: the token was refused but
        /// this request cannot be sent again (its body was not kept); renew it for the next
        /// one and say so to the client.
        case relay(renewedForNextRequest: Bool)
        /// Cancel the transfer, renew the token, and send the request again with it.
        case renewAndReplay
        /// Cancel the transfer and refuse: the token cannot be renewed.
        case rejectToken
        /// Cancel the transfer and fill the proxy's jar from the handoff endpoint.
        case refillJar
        /// Cancel the transfer and hand the browser a web session.
        case handOff
        /// Cancel the transfer and answer as for an upstream failure.
        case failUpstream
        case ignore
    }

    mutating func upstreamHead(_ head: Head) -> HeadAction {
        guard case .sending(let replayed, _) = state else { return .ignore }
        if head.status == 401 {
            // The session, not the token, is missing: a handoff provides it.
            if plan.refillsJarOn401, !replayed, body.complete {
                state = .refillingJar
                return .refillJar
            }
            if plan.handsOffOn401 {
                state = .handingOff
                return .handOff
            }
        }
        var renewed = false
        if plan.injectsIdentity, !replayed, head.refusesToken {
            guard plan.renewable else {
                state = .done
                return .rejectToken
            }
            guard !body.complete else {
                state = .waitingForToken(replay: true)
                return .renewAndReplay
            }
            renewed = true
        }
        guard head.framingValid else {
            state = .done
            return .failUpstream
        }
        state = .sending(replayed: replayed, headSent: true)
        return .relay(renewedForNextRequest: renewed)
    }

    /// Whether the upstream's body bytes go to the client (else they are dropped).
    func forwardsResponseBody() -> Bool {
        if case .sending = state { return true }
        return false
    }

    enum FinishAction: Equatable {
        /// Complete the client's response and record it.
        case finish
        /// Answer the client with the upstream failure's error, and record it.
        case answerFailure
        /// Cut the response the client already has part of, and record it.
        case cutResponse
        case ignore
    }

    /// The running transfer ended, with an error or not.
    mutating func upstreamFinished(failed: Bool) -> FinishAction {
        guard case .sending(_, let headSent) = state else { return .ignore }
        state = .done
        guard failed else { return .finish }
        // Part of the body may be with the client already: cut it, so that it can tell,
        // never a fake complete one.
        return headSent ? .cutResponse : .answerFailure
    }

    enum AbortAction: Equatable {
        /// Cancel the transfer if one runs; `record`: log the exchange as the client's
        /// going (a rejected body is logged by the server's own answer).
        case cancel(record: Bool)
        /// The handoff answers the client: tell it.
        case toHandoff
        case ignore
    }

    /// The client is gone, or the server refused the request's body.
    mutating func clientGone(bodyRejected: Bool) -> AbortAction {
        switch state {
        case .done: return .ignore
        case .handingOff: return .toHandoff
        case .waitingForToken, .sending, .refillingJar:
            state = .done
            return .cancel(record: !bodyRejected)
        }
    }

    // MARK: helpers

    private mutating func beginSending(replayed: Bool) -> Start {
        state = .sending(replayed: replayed, headSent: false)
        return Start(pendingBody: body.forNewTransfer(), bodyEnded: body.ended)
    }
}

