import Testing
@testable import Latchkey

/// `ExchangeMachine` driven event by event: no sockets, no transfers, no sleeps.
@Suite struct ExchangeMachineTests {
    private typealias Machine = ExchangeMachine

    private static let renewable = Machine.Plan(injectsIdentity: true, renewable: true, replayLimit: 8)

    private func body(_ machine: inout Machine, _ text: String) -> Machine.BodyAction {
        Array(text.utf8).withUnsafeBytes { machine.requestBody($0) }
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
        #expect(machine.upstreamHead(head(200)) == .relay(renewedForNextRequest: false))
        #expect(machine.state == .sending(replayed: false, headSent: true))
        #expect(machine.forwardsResponseBody())
        #expect(machine.upstreamFinished(failed: false) == .finish)
        #expect(machine.state == .done)
        #expect(!machine.forwardsResponseBody())
        #expect(machine.upstreamFinished(failed: false) == .ignore)
        #expect(machine.upstreamHead(head(200)) == .ignore)
    }

    @Test func aFailureBeforeTheHeadIsAnsweredAfterItTheResponseIsCut() {
        var before = Machine(plan: Machine.Plan())
        _ = before.start(tokenAtHand: false)
        #expect(before.upstreamFinished(failed: true) == .answerFailure)

        var after = Machine(plan: Machine.Plan())
        _ = after.start(tokenAtHand: false)
        _ = after.upstreamHead(head(200))
        #expect(after.upstreamFinished(failed: true) == .cutResponse)
        #expect(after.state == .done)
    }

    @Test func aHeadWithBrokenFramingFailsTheUpstream() {
        var machine = Machine(plan: Machine.Plan())
        _ = machine.start(tokenAtHand: false)
        #expect(machine.upstreamHead(head(200, framingValid: false)) == .failUpstream)
        #expect(machine.state == .done)
    }

    // MARK: renewal and replay

    @Test func aRefusedTokenIsRenewedAndTheRequestReplayedOnce() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        #expect(body(&machine, "abc") == .forward)
        #expect(machine.requestBodyEnded() == true)
        #expect(machine.upstreamHead(head(401, refusesToken: true)) == .renewAndReplay)
        #expect(machine.state == .waitingForToken(replay: true))
        // The replay gets the whole body again.
        #expect(machine.tokenArrived(true) == .startTransfer(start("abc", ended: true)))
        #expect(machine.state == .sending(replayed: true, headSent: false))
        // A renewed token refused again is not the token's fault: the client gets it.
        #expect(machine.upstreamHead(head(401, refusesToken: true)) == .relay(renewedForNextRequest: false))
    }

    @Test func aBodyTooLargeToKeepIsNotReplayedButTheTokenRenewed() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        #expect(body(&machine, "more than eight") == .forward)
        #expect(machine.upstreamHead(head(401, refusesToken: true)) == .relay(renewedForNextRequest: true))
        #expect(machine.state == .sending(replayed: false, headSent: true))
    }

    @Test func aBodyAnnouncedLargerThanTheLimitIsNeverKept() {
        var plan = Self.renewable
        plan.declaredLength = 9
        var machine = Machine(plan: plan)
        _ = machine.start(tokenAtHand: true)
        #expect(machine.upstreamHead(head(401, refusesToken: true)) == .relay(renewedForNextRequest: true))
    }

    @Test func aStaticTokenRefusedIsRejected() {
        var machine = Machine(plan: Machine.Plan(injectsIdentity: true, renewable: false))
        _ = machine.start(tokenAtHand: true)
        #expect(machine.upstreamHead(head(401, refusesToken: true)) == .rejectToken)
        #expect(machine.state == .done)
    }

    @Test func aRefusalWithoutIdentityIsRelayed() {
        var machine = Machine(plan: Machine.Plan())
        _ = machine.start(tokenAtHand: false)
        #expect(machine.upstreamHead(head(401, refusesToken: true)) == .relay(renewedForNextRequest: false))
    }

    @Test func anErrorThatDoesNotRefuseTheTokenIsRelayed() {
        var machine = Machine(plan: Self.renewable)
        _ = machine.start(tokenAtHand: true)
        #expect(machine.upstreamHead(head(403)) == .relay(renewedForNextRequest: false))
    }

    // MARK: handoffs

    @Test func aProxyJarIsRefilledAndTheRequestSentAgainOnce() {
        var machine = Machine(plan: Machine.Plan(refillsJarOn401: true, replayLimit: 8))
        _ = machine.start(tokenAtHand: false)
        _ = body(&machine, "ab")
        #expect(machine.upstreamHead(head(401)) == .refillJar)
        #expect(machine.state == .refillingJar)
        #expect(body(&machine, "c") == .hold)
        #expect(machine.requestBodyEnded() == false)
        #expect(machine.jarRefilled(true) == .startTransfer(start("abc", ended: true)))
        #expect(machine.state == .sending(replayed: true, headSent: false))
        // Still 401 with the refilled jar: the client gets it.
        #expect(machine.upstreamHead(head(401)) == .relay(renewedForNextRequest: false))
    }

    @Test func aFailedRefillIsARefusal() {
        var machine = Machine(plan: Machine.Plan(refillsJarOn401: true, replayLimit: 8))
        _ = machine.start(tokenAtHand: false)
        _ = machine.upstreamHead(head(401))
        #expect(machine.jarRefilled(false) == .refuse)
        #expect(machine.state == .done)
        #expect(machine.jarRefilled(true) == .ignore)
    }

    @Test func aJarIsNotRefilledForABodyTooLargeToSendAgain() {
        var machine = Machine(plan: Machine.Plan(refillsJarOn401: true, replayLimit: 2))
        _ = machine.start(tokenAtHand: false)
        _ = body(&machine, "abc")
        #expect(machine.upstreamHead(head(401)) == .relay(renewedForNextRequest: false))
    }

    @Test func aRefusedNavigationIsHandedOffAndTheHandoffToldOfTheClientsGoing() {
        var machine = Machine(plan: Machine.Plan(handsOffOn401: true))
        _ = machine.start(tokenAtHand: false)
        #expect(machine.upstreamHead(head(401)) == .handOff)
        #expect(machine.state == .handingOff)
        #expect(!machine.forwardsResponseBody())
        #expect(body(&machine, "x") == .hold)
        #expect(machine.upstreamFinished(failed: false) == .ignore)
        #expect(machine.clientGone(bodyRejected: false) == .toHandoff)
    }

    @Test func onlyA401HandsOff() {
        var machine = Machine(plan: Machine.Plan(handsOffOn401: true))
        _ = machine.start(tokenAtHand: false)
        #expect(machine.upstreamHead(head(403)) == .relay(renewedForNextRequest: false))
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
        _ = rejected.upstreamHead(head(401))
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
