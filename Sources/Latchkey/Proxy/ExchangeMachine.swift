import LatchkeyConfig
import LatchkeyHTTP

/// The life of one proxied request, as a value: events in (a token, the client's body, the
/// upstream's head, body and end, the client gone, a handoff's answer), actions out. No
/// I/O: `ProxyExchange` feeds it and performs what it returns.
///
/// A request is sent at most twice: once, and once more after the upstream refused its
/// token (renewed) or the proxy's cookie session (refilled by the handoff endpoint), and
/// only while every byte of its body is still in `body` (the bounded replay record). An
/// answer whose body says whether it refuses the token (`renew_on` body matches) is held
/// from the client, bounded, until that body has been read.
struct ExchangeMachine {
    enum State: Equatable {
        /// No transfer yet: the identity's token is awaited, for the first sending or, with
        /// `replay`, for the second after a renewal.
        case waitingForToken(replay: Bool)
        /// A transfer is running. `replayed`: it is the request's second sending;
        /// `headSent`: its response head went to the client, which has part of the answer.
        case sending(replayed: Bool, headSent: Bool)
        /// The first sending's answer has a status that `renew_on` body matches judge: its
        /// head and body are held from the client, the transfer running, until the body
        /// ends (judged by `judge`) or outgrows `RenewalPolicy.bodyReadLimit` (relayed).
        case inspectingRefusal(HeldAnswer, judge: RenewalPolicy)
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

    /// An upstream's answer held back from the client while its body is read.
    struct HeldAnswer: Equatable {
        var status: Int
        var fields: HTTPFields
        var body: [UInt8] = []
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
        case .sending, .inspectingRefusal:
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
        switch state {
        case .sending, .inspectingRefusal: return true
        case .waitingForToken, .refillingJar, .handingOff, .done: return false
        }
    }

    // MARK: upstream → client

    /// How the upstream's response head is judged.
    struct Head: Equatable {
        var status: Int
        /// The route's renewal policy says the token is no longer good.
        var refusesToken: Bool
        /// Its framing can be relayed (RFC 9112 §6.3: no invalid or conflicting lengths).
        var framingValid: Bool
        /// The route's policy, when its `renew_on` body matches judge this status and the
        /// head alone does not refuse the token (`RenewalPolicy.judgesBody`); else nil.
        var judgedByBody: RenewalPolicy? = nil
        /// The body's announced length, read for a status judged by its body: a body
        /// announced longer than `RenewalPolicy.bodyReadLimit` is relayed unread.
        var declaredLength: UInt64? = nil
    }

    enum HeadAction: Equatable {
        /// Send the head to the client. `renewedForNextRequest`: the token was refused but
        /// this request cannot be sent again (its body was not kept); renew it for the next
        /// one and say so to the client.
        case relay(renewedForNextRequest: Bool)
        /// Cancel the transfer, renew the token, and send the request again with it.
        case renewAndReplay
        /// Send nothing to the client yet: the body decides (`responseBody`,
        /// `upstreamFinished`).
        case inspectBody
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

    /// `fields`: the head's fields, kept only when the answer is held.
    mutating func upstreamHead(_ head: Head, fields: HTTPFields) -> HeadAction {
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
            switch tokenRefused() {
            case .reject: return .rejectToken
            case .renewAndReplay: return .renewAndReplay
            case .renewForNextRequest: renewed = true
            }
        }
        guard head.framingValid else {
            state = .done
            return .failUpstream
        }
        // Only the first sending's answer can refuse the token, as above; a body announced
        // past the bound is never read, so it cannot match.
        if plan.injectsIdentity, !replayed, let judge = head.judgedByBody,
           (head.declaredLength ?? 0) <= UInt64(RenewalPolicy.bodyReadLimit) {
            state = .inspectingRefusal(HeldAnswer(status: head.status, fields: fields), judge: judge)
            return .inspectBody
        }
        state = .sending(replayed: replayed, headSent: true)
        return .relay(renewedForNextRequest: renewed)
    }

    enum ResponseBodyAction: Equatable {
        /// Send the bytes to the client.
        case forward
        /// Kept with the held answer; the transfer may go on (the hold is bounded).
        case hold
        /// The held answer outgrew the bound, so it cannot match: send the client its head
        /// and held body (these bytes included), then relay the rest as it comes.
        case release(HeldAnswer)
        /// Nobody is to get them (the transfer is being replaced, or the exchange is over).
        case drop
    }

    mutating func responseBody(_ bytes: UnsafeRawBufferPointer) -> ResponseBodyAction {
        switch state {
        case .sending:
            return .forward
        case .inspectingRefusal(var held, let judge):
            // Out of the state while it grows, so that appending does not copy the bytes.
            state = .done
            held.body.append(contentsOf: bytes)
            guard held.body.count > RenewalPolicy.bodyReadLimit else {
                state = .inspectingRefusal(held, judge: judge)
                return .hold
            }
            state = .sending(replayed: false, headSent: true)
            return .release(held)
        case .waitingForToken, .refillingJar, .handingOff, .done:
            return .drop
        }
    }

    enum FinishAction: Equatable {
        /// Complete the client's response and record it.
        case finish
        /// Answer the client with the upstream failure's error, and record it.
        case answerFailure
        /// Cut the response the client already has part of, and record it.
        case cutResponse
        /// The held answer refuses the token: renew it and send the request again with it.
        case renewAndReplay
        /// The held answer refuses a token that cannot be renewed: refuse.
        case rejectToken
        /// Send the client the held answer whole, and record it. `renewedForNextRequest` as
        /// for `HeadAction.relay`.
        case relayHeld(HeldAnswer, renewedForNextRequest: Bool)
        case ignore
    }

    /// The running transfer ended, with an error or not.
    mutating func upstreamFinished(failed: Bool) -> FinishAction {
        switch state {
        case .sending(_, let headSent):
            state = .done
            guard failed else { return .finish }
            // Part of the body may be with the client already: cut it, so that it can
            // tell, never a fake complete one.
            return headSent ? .cutResponse : .answerFailure
        case .inspectingRefusal(let held, let judge):
            state = .done
            // The client has nothing of the answer yet.
            guard !failed else { return .answerFailure }
            guard judge.bodyRefuses(status: held.status, body: held.body) else {
                return .relayHeld(held, renewedForNextRequest: false)
            }
            switch tokenRefused() {
            case .reject: return .rejectToken
            case .renewAndReplay: return .renewAndReplay
            case .renewForNextRequest: return .relayHeld(held, renewedForNextRequest: true)
            }
        case .waitingForToken, .refillingJar, .handingOff, .done:
            return .ignore
        }
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
        case .waitingForToken, .sending, .inspectingRefusal, .refillingJar:
            state = .done
            return .cancel(record: !bodyRejected)
        }
    }

    // MARK: helpers

    /// What becomes of a first sending whose token the upstream refused.
    private enum Refusal {
        /// It cannot be renewed (a static token): the exchange is over.
        case reject
        /// Every byte of the body is kept: wait for a renewed token and send it again.
        case renewAndReplay
        /// The body was not kept: the answer goes to the client, and the next request gets
        /// a renewed token.
        case renewForNextRequest
    }

    private mutating func tokenRefused() -> Refusal {
        guard plan.renewable else {
            state = .done
            return .reject
        }
        guard !body.complete else {
            state = .waitingForToken(replay: true)
            return .renewAndReplay
        }
        return .renewForNextRequest
    }

    private mutating func beginSending(replayed: Bool) -> Start {
        state = .sending(replayed: replayed, headSent: false)
        return Start(pendingBody: body.forNewTransfer(), bodyEnded: body.ended)
    }
}

