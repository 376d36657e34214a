import LatchkeyConfig
import LatchkeyHTTP
import Testing
@testable import Latchkey

/// `ExchangeMachine` driven event by event: no sockets, no transfers, no sleeps.
@Suite struct ExchangeMachineTests {
    private typealias Machine = ExchangeMachine

    private static let renewable = Machine.Plan(injectsIdentity: true, renewable: true, replayLimit: 8)

    private func body(_ machine: inout Machine, _ text: String) -> Machine.BodyAction {
        Array(text.utf8).withUnsafeBytes { machine.requestBody($0) }
    }

    /// The upstream's answer body.
    private func answerBody(_ machine: inout Machine, _ text: String) -> Machine.ResponseBodyAction {
        Array(text.utf8).withUnsafeBytes { machine.responseBody($0) }
    }

    private func head(_ status: Int, refusesToken: Bool = false, framingValid: Bool = true) -> Machine.Head {
        Machine.Head(status: status, refusesToken: refusesToken, framingValid: framingValid)
    }

    private func start(_ body: String = "", ended: Bool = false) -> Machine.Start {
        Machine.Start(pendingBody: Array(body.utf8), bodyEnded: ended)
    }

    // MARK: starting

    @Test func aRouteWithoutIdentityStartsAtOnce() {
        var machine = Machine(plan: Machine.Plan())
        #expect(machine.start(tokenAtHand: false) == .startTransfer(start()))
        #expect(machine.state == .sending(replayed: false, headSent: false))
    }

    @Test func aTokenAtHandStartsAtOnce() {
        var machine = Machine(plan: Self.renewable)
        #expect(machine.start(tokenAtHand: true) == .startTransfer(start()))
    }

    @Test func withoutATokenTheBodyIsHeldUntilItArrives() {
        var machine = Machine(plan: Self.renewable)
        #expect(machine.start(tokenAtHand: false) == .waitForToken)
        #expect(machine.state == .waitingForToken(replay: false))
        #expect(body(&machine, "abc") == .hold)
        #expect(machine.requestBodyEnded() == false)
        #expect(machine.tokenArrived(true) == .startTransfer(start("abc", ended: true)))
        #expect(machine.state == .sending(replayed: false, headSent: false))
    }

    @Test func noTokenIsARefusal() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: false)
        #expect(machine.tokenArrived(false) == .refuse)
        #expect(machine.state == .done)
    }

    @Test func aTokenForAnExchangeThatEndedIsIgnored() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: false)
        #expect(machine.clientGone(bodyRejected: false) == .cancel(record: true))
        #expect(machine.tokenArrived(true) == .ignore)
        #expect(machine.state == .done)
    }

    @Test func aTokenWhileSendingIsIgnored() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        #expect(machine.tokenArrived(true) == .ignore)
        #expect(machine.state == .sending(replayed: false, headSent: false))
    }

    // MARK: body and response

    @Test func whileSendingTheBodyIsForwardedAndItsEndPassedOn() {
        var machine = Machine(plan: Machine.Plan())
        _ = machine.start(tokenAtHand: false)
        #expect(body(&machine, "abc") == .forward)
        #expect(machine.requestBodyEnded() == true)
    }

    @Test func aRelayedResponseFinishes() {
        var machine = Machine(plan: Machine.Plan())
        _ = machine.start(tokenAtHand: false)
        #expect(machine.upstreamHead(head(200), fields: [:]) == .relay(renewedForNextRequest: false))
        #expect(machine.state == .sending(replayed: false, headSent: true))
        #expect(answerBody(&machine, "ok") == .forward)
        #expect(machine.upstreamFinished(failed: false) == .finish)
        #expect(machine.state == .done)
        #expect(answerBody(&machine, "late") == .drop)
        #expect(machine.upstreamFinished(failed: false) == .ignore)
        #expect(machine.upstreamHead(head(200), fields: [:]) == .ignore)
    }

    @Test func aFailureBeforeTheHeadIsAnsweredAfterItTheResponseIsCut() {
        var before = Machine(plan: Machine.Plan())
        _ = before.start(tokenAtHand: false)
        #expect(before.upstreamFinished(failed: true) == .answerFailure)

        var after = Machine(plan: Machine.Plan())
        _ = after.start(tokenAtHand: false)
        _ = after.upstreamHead(head(200), fields: [:])
        #expect(after.upstreamFinished(failed: true) == .cutResponse)
        #expect(after.state == .done)
    }

    @Test func aHeadWithBrokenFramingFailsTheUpstream() {
        var machine = Machine(plan: Machine.Plan())
        _ = machine.start(tokenAtHand: false)
        #expect(machine.upstreamHead(head(200, framingValid: false), fields: [:]) == .failUpstream)
        #expect(machine.state == .done)
    }

    // MARK: renewal and replay

    @Test func aRefusedTokenIsRenewedAndTheRequestReplayedOnce() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        #expect(body(&machine, "abc") == .forward)
        #expect(machine.requestBodyEnded() == true)
        #expect(machine.upstreamHead(head(401, refusesToken: true), fields: [:]) == .renewAndReplay)
        #expect(machine.state == .waitingForToken(replay: true))
        // The replay gets the whole body again.
        #expect(machine.tokenArrived(true) == .startTransfer(start("abc", ended: true)))
        #expect(machine.state == .sending(replayed: true, headSent: false))
        // A renewed token refused again is not the token's fault: the client gets it.
        #expect(machine.upstreamHead(head(401, refusesToken: true), fields: [:]) == .relay(renewedForNextRequest: false))
    }

    @Test func aBodyTooLargeToKeepIsNotReplayedButTheTokenRenewed() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        #expect(body(&machine, "more than eight") == .forward)
        #expect(machine.upstreamHead(head(401, refusesToken: true), fields: [:]) == .relay(renewedForNextRequest: true))
        #expect(machine.state == .sending(replayed: false, headSent: true))
    }

    @Test func aBodyAnnouncedLargerThanTheLimitIsNeverKept() {
        var plan = Self.renewable
        plan.declaredLength = 9
        var machine = Machine(plan: plan)
        _ = machine.start(tokenAtHand: true)
        #expect(machine.upstreamHead(head(401, refusesToken: true), fields: [:]) == .relay(renewedForNextRequest: true))
    }

    @Test func aStaticTokenRefusedIsRejected() {
        var machine = Machine(plan: Machine.Plan(injectsIdentity: true, renewable: false))
        _ = machine.start(tokenAtHand: true)
        #expect(machine.upstreamHead(head(401, refusesToken: true), fields: [:]) == .rejectToken)
        #expect(machine.state == .done)
    }

    @Test func aRefusalWithoutIdentityIsRelayed() {
        var machine = Machine(plan: Machine.Plan())
        _ = machine.start(tokenAtHand: false)
        #expect(machine.upstreamHead(head(401, refusesToken: true), fields: [:]) == .relay(renewedForNextRequest: false))
    }

    @Test func anErrorThatDoesNotRefuseTheTokenIsRelayed() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        #expect(machine.upstreamHead(head(403), fields: [:]) == .relay(renewedForNextRequest: false))
    }

    // MARK: renewal decided by the answer's body

    /// TMDB's `renew_on: [{ status: 401, json: { status_code: 3 } }]`.
    private static let sessionRefused = RenewalPolicy(statuses: [], bodyMatches: [
        RenewalBodyMatch(status: 401, fields: [JSONFieldMatch(path: JSONPath(components: [.key("status_code")]), value: .number(3))]),
    ])
    private static let answerFields: HTTPFields = ["Content-Type": "application/json"]

    private func judged(_ status: Int = 401, length: UInt64? = nil, framingValid: Bool = true) -> Machine.Head {
        Machine.Head(status: status, refusesToken: false, framingValid: framingValid, judgedByBody: Self.sessionRefused,
                     declaredLength: length)
    }

    private func held(_ body: String, status: Int = 401) -> Machine.HeldAnswer {
        Machine.HeldAnswer(status: status, fields: Self.answerFields, body: Array(body.utf8))
    }

    /// A machine whose first sending (body `requestBody`, ended) got a head judged by its body.
    private func holding(_ plan: Machine.Plan = renewable, requestBody: String = "abc") -> Machine {
        var machine = Machine(plan: plan)
        _ = machine.start(tokenAtHand: true)
        _ = body(&machine, requestBody)
        _ = machine.requestBodyEnded()
        #expect(machine.upstreamHead(judged(), fields: Self.answerFields) == .inspectBody)
        #expect(machine.state == .inspectingRefusal(held(""), judge: Self.sessionRefused))
        return machine
    }

    @Test func aBodyThatMatchesRenewsTheTokenAndReplaysTheRequestOnce() {
        var machine = holding()
        #expect(answerBody(&machine, #"{"status_code": "#) == .hold)
        #expect(answerBody(&machine, #"3, "status_message": "Invalid session"}"#) == .hold)
        #expect(machine.upstreamFinished(failed: false) == .renewAndReplay)
        #expect(machine.state == .waitingForToken(replay: true))
        #expect(machine.tokenArrived(true) == .startTransfer(start("abc", ended: true)))
        // The replay's answer is the client's whatever its body says.
        #expect(machine.upstreamHead(judged(), fields: Self.answerFields) == .relay(renewedForNextRequest: false))
    }

    @Test func aBodyThatDoesNotMatchReachesTheClientWhole() {
        var machine = holding()
        #expect(answerBody(&machine, #"{"status_code":7,"#) == .hold)
        #expect(answerBody(&machine, #""status_message":"Invalid API key"}"#) == .hold)
        #expect(machine.upstreamFinished(failed: false)
            == .relayHeld(held(#"{"status_code":7,"status_message":"Invalid API key"}"#), renewedForNextRequest: false))
        #expect(machine.state == .done)
        #expect(machine.tokenArrived(true) == .ignore)
    }

    @Test func aBodyThatIsNotJSONDoesNotMatch() {
        var machine = holding()
        _ = answerBody(&machine, "<html>status_code 3</html>")
        #expect(machine.upstreamFinished(failed: false) == .relayHeld(held("<html>status_code 3</html>"), renewedForNextRequest: false))
    }

    @Test func anEmptyBodyDoesNotMatch() {
        var machine = holding()
        #expect(machine.upstreamFinished(failed: false) == .relayHeld(held(""), renewedForNextRequest: false))
    }

    @Test func aBodyPastTheBoundIsReleasedAndTheRestRelayed() {
        var machine = holding()
        let limit = RenewalPolicy.bodyReadLimit
        let first = String(repeating: " ", count: limit - 1)
        #expect(answerBody(&machine, first) == .hold)
        #expect(answerBody(&machine, "{") == .hold, "the bound itself is still held")
        #expect(answerBody(&machine, #""status_code":3}"#) == .release(held(first + #"{"status_code":3}"#)))
        #expect(machine.state == .sending(replayed: false, headSent: true))
        #expect(answerBody(&machine, "more") == .forward)
        #expect(machine.upstreamFinished(failed: false) == .finish)
    }

    @Test func aBodyAnnouncedPastTheBoundIsRelayedUnread() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        let head = judged(length: UInt64(RenewalPolicy.bodyReadLimit) + 1)
        #expect(machine.upstreamHead(head, fields: Self.answerFields) == .relay(renewedForNextRequest: false))
        #expect(answerBody(&machine, #"{"status_code":3}"#) == .forward)

        var atTheBound = Machine(plan: Self.renewable)
        _ = atTheBound.start(tokenAtHand: true)
        #expect(atTheBound.upstreamHead(judged(length: UInt64(RenewalPolicy.bodyReadLimit)), fields: [:]) == .inspectBody)
    }

    @Test func anUpstreamFailureWhileHoldingIsAnsweredAsOne() {
        var machine = holding()
        _ = answerBody(&machine, #"{"status_"#)
        #expect(machine.upstreamFinished(failed: true) == .answerFailure)
        #expect(machine.state == .done)
    }

    @Test func aClientGoneWhileHoldingCancelsTheTransfer() {
        var machine = holding()
        _ = answerBody(&machine, "{")
        #expect(machine.clientGone(bodyRejected: false) == .cancel(record: true))
        #expect(machine.state == .done)
        #expect(answerBody(&machine, "}") == .drop)
        #expect(machine.upstreamFinished(failed: false) == .ignore)
    }

    @Test func aMatchWhoseRequestBodyWasNotKeptIsRelayedAndTheTokenRenewedForTheNextRequest() {
        var machine = holding(requestBody: "more than eight")
        _ = answerBody(&machine, #"{"status_code":3}"#)
        #expect(machine.upstreamFinished(failed: false) == .relayHeld(held(#"{"status_code":3}"#), renewedForNextRequest: true))
        #expect(machine.state == .done)
    }

    @Test func aMatchForATokenThatCannotBeRenewedIsRejected() {
        var machine = holding(Machine.Plan(injectsIdentity: true, renewable: false))
        _ = answerBody(&machine, #"{"status_code":3}"#)
        #expect(machine.upstreamFinished(failed: false) == .rejectToken)
        #expect(machine.state == .done)
    }

    @Test func theRequestBodyGoesOnWhileTheAnswerIsHeld() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        _ = body(&machine, "ab")
        #expect(machine.upstreamHead(judged(), fields: [:]) == .inspectBody)
        #expect(body(&machine, "c") == .forward)
        #expect(machine.requestBodyEnded() == true)
        _ = answerBody(&machine, #"{"status_code":3}"#)
        #expect(machine.upstreamFinished(failed: false) == .renewAndReplay)
        #expect(machine.tokenArrived(true) == .startTransfer(start("abc", ended: true)))
    }

    @Test func onlyAnInjectedIdentitysAnswerWithValidFramingIsHeld() {
        var noIdentity = Machine(plan: Machine.Plan())
        _ = noIdentity.start(tokenAtHand: false)
        #expect(noIdentity.upstreamHead(judged(), fields: [:]) == .relay(renewedForNextRequest: false))

        var broken = Machine(plan: Self.renewable)
        _ = broken.start(tokenAtHand: true)
        #expect(broken.upstreamHead(judged(framingValid: false), fields: [:]) == .failUpstream)
    }

    // MARK: handoffs

    @Test func aProxyJarIsRefilledAndTheRequestSentAgainOnce() {
        var machine = Machine(plan: Machine.Plan(refillsJarOn401: true, replayLimit: 8))
        _ = machine.start(tokenAtHand: false)
        _ = body(&machine, "ab")
        #expect(machine.upstreamHead(head(401), fields: [:]) == .refillJar)
        #expect(machine.state == .refillingJar)
        #expect(body(&machine, "c") == .hold)
        #expect(machine.requestBodyEnded() == false)
        #expect(machine.jarRefilled(true) == .startTransfer(start("abc", ended: true)))
        #expect(machine.state == .sending(replayed: true, headSent: false))
        // Still 401 with the refilled jar: the client gets it.
        #expect(machine.upstreamHead(head(401), fields: [:]) == .relay(renewedForNextRequest: false))
    }

    @Test func aFailedRefillIsARefusal() {
        var machine = Machine(plan: Machine.Plan(refillsJarOn401: true, replayLimit: 8))
        _ = machine.start(tokenAtHand: false)
        _ = machine.upstreamHead(head(401), fields: [:])
        #expect(machine.jarRefilled(false) == .refuse)
        #expect(machine.state == .done)
        #expect(machine.jarRefilled(true) == .ignore)
    }

    @Test func aJarIsNotRefilledForABodyTooLargeToSendAgain() {
        var machine = Machine(plan: Machine.Plan(refillsJarOn401: true, replayLimit: 2))
        _ = machine.start(tokenAtHand: false)
        _ = body(&machine, "abc")
        #expect(machine.upstreamHead(head(401), fields: [:]) == .relay(renewedForNextRequest: false))
    }

    @Test func aRefusedNavigationIsHandedOffAndTheHandoffToldOfTheClientsGoing() {
        var machine = Machine(plan: Machine.Plan(handsOffOn401: true))
        _ = machine.start(tokenAtHand: false)
        #expect(machine.upstreamHead(head(401), fields: [:]) == .handOff)
        #expect(machine.state == .handingOff)
        #expect(answerBody(&machine, "refused") == .drop)
        #expect(body(&machine, "x") == .hold)
        #expect(machine.upstreamFinished(failed: false) == .ignore)
        #expect(machine.clientGone(bodyRejected: false) == .toHandoff)
    }

    @Test func onlyA401HandsOff() {
        var machine = Machine(plan: Machine.Plan(handsOffOn401: true))
        _ = machine.start(tokenAtHand: false)
        #expect(machine.upstreamHead(head(403), fields: [:]) == .relay(renewedForNextRequest: false))
    }

    // MARK: the client's going

    @Test func aClientGoneCancelsAndIsRecordedUnlessItsBodyWasRejected() {
        var gone = Machine(plan: Machine.Plan())
        _ = gone.start(tokenAtHand: false)
        #expect(gone.clientGone(bodyRejected: false) == .cancel(record: true))
        #expect(gone.state == .done)
        #expect(gone.clientGone(bodyRejected: false) == .ignore)

        var rejected = Machine(plan: Machine.Plan(refillsJarOn401: true, replayLimit: 8))
        _ = rejected.start(tokenAtHand: false)
        _ = rejected.upstreamHead(head(401), fields: [:])
        #expect(rejected.clientGone(bodyRejected: true) == .cancel(record: false))
    }

    @Test func afterTheEndTheBodyIsNeitherForwardedNorKept() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        _ = machine.upstreamFinished(failed: false)
        #expect(body(&machine, "late") == .hold)
        #expect(machine.requestBodyEnded() == false)
        #expect(machine.body.bytes.isEmpty)
    }
}
