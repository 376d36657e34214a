import Testing
@testable import Latchkey

/// The upstream side of a protocol switch, event by event: the token, the handshake's
/// answer, one renewal before the switch, failures, the client leaving.
struct UpgradeMachineTests {
    @Test func aRouteWithoutAnIdentityHandshakesAtOnceAndSwitches() {
        var machine = UpgradeMachine(injectsIdentity: false, renewable: false)
        let result1 = machine.start(tokenAtHand: false)
        #expect(result1 == .handshake)
        let result2 = machine.responseHead(status: 101, refusesToken: false)
        #expect(result2 == .switchProtocols)
        #expect(machine.state == .switched)
        // The client leaving is the connection's business once it relays.
        let result3 = machine.clientGone()
        #expect(!result3)
        machine.streamEnded()
        #expect(machine.state == .done)
    }

    @Test func anIdentityWithoutATokenWaitsForOne() {
        var machine = UpgradeMachine(injectsIdentity: true, renewable: true)
        let result4 = machine.start(tokenAtHand: false)
        #expect(result4 == .waitForToken)
        let result5 = machine.tokenArrived(usable: true)
        #expect(result5 == .handshake)
        #expect(machine.state == .handshaking(renewed: false))
    }

    @Test func noUsableTokenIsRefused() {
        var machine = UpgradeMachine(injectsIdentity: true, renewable: true)
        _ = machine.start(tokenAtHand: false)
        let result6 = machine.tokenArrived(usable: false)
        #expect(result6 == .refuse)
        #expect(machine.state == .done)
    }

    @Test func aRefusedTokenIsRenewedAndTheHandshakeSentAgainOnce() {
        var machine = UpgradeMachine(injectsIdentity: true, renewable: true)
        _ = machine.start(tokenAtHand: true)
        let result7 = machine.responseHead(status: 401, refusesToken: true)
        #expect(result7 == .renewAndRetry)
        #expect(machine.state == .renewing)
        let result8 = machine.tokenArrived(usable: true)
        #expect(result8 == .handshake)
        #expect(machine.state == .handshaking(renewed: true))
        // A second refusal is the client's answer.
        let result9 = machine.responseHead(status: 401, refusesToken: true)
        #expect(result9 == .answer)
        machine.answerFinished()
        #expect(machine.state == .done)
    }

    @Test func aRenewedTokenThatSwitchesIsFine() {
        var machine = UpgradeMachine(injectsIdentity: true, renewable: true)
        _ = machine.start(tokenAtHand: true)
        _ = machine.responseHead(status: 401, refusesToken: true)
        _ = machine.tokenArrived(usable: true)
        let result10 = machine.responseHead(status: 101, refusesToken: false)
        #expect(result10 == .switchProtocols)
    }

    @Test func aStaticTokenRefusedCannotBeRenewed() {
        var machine = UpgradeMachine(injectsIdentity: true, renewable: false)
        _ = machine.start(tokenAtHand: true)
        let result11 = machine.responseHead(status: 401, refusesToken: true)
        #expect(result11 == .rejectToken)
        #expect(machine.state == .done)
    }

    @Test func anotherAnswerIsRelayed() {
        var machine = UpgradeMachine(injectsIdentity: false, renewable: false)
        _ = machine.start(tokenAtHand: false)
        // A refusal on a route without an identity is only an answer.
        let result12 = machine.responseHead(status: 401, refusesToken: true)
        #expect(result12 == .answer)
        let result13 = machine.failed()
        #expect(result13 == .cut)
    }

    @Test func failuresAnswerBeforeTheHeadAndCutAfterIt() {
        var handshaking = UpgradeMachine(injectsIdentity: false, renewable: false)
        _ = handshaking.start(tokenAtHand: false)
        let result14 = handshaking.failed()
        #expect(result14 == .answer)
        let result15 = handshaking.failed()
        #expect(result15 == .ignore)
        var switched = UpgradeMachine(injectsIdentity: false, renewable: false)
        _ = switched.start(tokenAtHand: false)
        _ = switched.responseHead(status: 101, refusesToken: false)
        let result16 = switched.failed()
        #expect(result16 == .ignore)
    }

    @Test func theClientLeavingStopsTheWorkOnce() {
        var machine = UpgradeMachine(injectsIdentity: true, renewable: true)
        _ = machine.start(tokenAtHand: false)
        let result17 = machine.clientGone()
        #expect(result17)
        let result18 = machine.clientGone()
        #expect(!result18)
        let result19 = machine.tokenArrived(usable: true)
        #expect(result19 == .ignore)
        let result20 = machine.responseHead(status: 101, refusesToken: false)
        #expect(result20 == .ignore)
    }
}
