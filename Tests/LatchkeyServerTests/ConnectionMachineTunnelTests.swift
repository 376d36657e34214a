import LatchkeyHTTP
import LatchkeyLoop
@testable import LatchkeyServer
import Testing

/// CONNECT tunnels in the connection's state machine, event by event: the 200 first, then
/// the interception's handshake or a relay whose directions end one at a time.
struct ConnectionMachineTunnelTests {
    let settings = ConnectionMachineTests.settings
    func at(_ seconds: Int) -> LoopInstant { ConnectionMachineTests.at(seconds) }

    static let connect = RequestHead(method: "CONNECT", target: "api.test:443")

    /// A machine serving a CONNECT whose tunnel was opened and whose 200 has been written.
    func opened(_ kind: ConnectionMachine.TunnelKind) -> ConnectionMachine {
        var machine = ConnectionMachineTests().serving(Self.connect)
        let accepted = machine.tunnelOpened(kind)
        let flushed = machine.outputFlushed(pending: 0, highWater: 1000)
        #expect(accepted)
        #expect(flushed == .startTunnel(kind))
        return machine
    }

    func relaying(_ kind: ConnectionMachine.RelayKind = .tunnel) -> ConnectionMachine {
        var machine = opened(.relay(kind))
        machine.relayStarted()
        #expect(machine.isRelaying)
        return machine
    }

    @Test func theTunnelStartsOnlyOnceItsAnswerIsWritten() {
        var machine = ConnectionMachineTests().serving(Self.connect)
        let accepted = machine.tunnelOpened(.relay(.tunnel))
        let partly = machine.outputFlushed(pending: 19, highWater: 1000)
        #expect(accepted)
        #expect(partly == .none)
        // Bytes behind the CONNECT wait in the socket until then.
        #expect(!machine.wantsInput(bufferFull: false))
        #expect(machine.decodeStep == .none)
        let written = machine.outputFlushed(pending: 0, highWater: 1000)
        #expect(written == .startTunnel(.relay(.tunnel)))
    }

    @Test func aTunnelCannotOpenOnceTheResponseStarted() {
        var machine = ConnectionMachineTests().serving(Self.connect)
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: 10, version: .http1_1)
        let accepted = machine.tunnelOpened(.intercept)
        #expect(!accepted)
    }

    @Test func interceptionHandshakesWithinTheHeadTimeoutThenServesRequests() {
        var machine = opened(.intercept)
        machine.interceptionStarted(at: at(3), handshakeTimeout: .seconds(10))
        #expect(machine.isHandshaking)
        #expect(machine.timerDeadline(now: at(4), outputPending: false, settings: settings) == at(13))
        #expect(machine.timerFired(at: at(13)) == .handshakeTimedOut(after: .seconds(10)))
        machine.handshakeCompleted(at: at(5))
        #expect(machine.state == .opened(at: at(5)))
        #expect(machine.decodeStep == .head)
    }

    @Test func aRelayIsTimedByTheTunnelIdleTimeout() {
        let machine = relaying()
        let tunnelSettings = ConnectionSettings(idleTimeout: .seconds(60), tunnelIdleTimeout: .seconds(600))
        #expect(machine.timerDeadline(now: at(7), outputPending: false, settings: tunnelSettings) == at(607))
        #expect(machine.timerFired(at: at(607)) == .tunnelIdle)
    }

    @Test func aRelayReadsEachSideOnlyWhileTheOtherCanTakeMore() {
        let machine = relaying()
        #expect(machine.wantsInput(bufferFull: false))
        #expect(!machine.wantsInput(bufferFull: true))
        #expect(machine.wantsUpstreamInput(outputPending: 999, highWater: 1000))
        #expect(!machine.wantsUpstreamInput(outputPending: 1000, highWater: 1000))
    }

    @Test func theClientsEndIsPassedOnAtOnceWhenNothingWaits() {
        var machine = relaying()
        let clientEnded = machine.relayPeerFinished(.client, undelivered: false)
        #expect(clientEnded == .finishSending(to: .upstream))
        // The other way stays open: a half close.
        #expect(!machine.wantsInput(bufferFull: false))
        #expect(machine.wantsUpstreamInput(outputPending: 0, highWater: 1000))
        let upstreamEnded = machine.relayPeerFinished(.upstream, undelivered: false)
        #expect(upstreamEnded == .close)
    }

    @Test func theUpstreamsEndWaitsForTheBytesBeforeIt() {
        var machine = relaying()
        let ended = machine.relayPeerFinished(.upstream, undelivered: true)
        #expect(ended == .none)
        #expect(!machine.wantsUpstreamInput(outputPending: 0, highWater: 1000))
        let partly = machine.relayOutputFlushed(pending: 10)
        #expect(partly == .none)
        let flushed = machine.outputFlushed(pending: 0, highWater: 1000)
        #expect(flushed == .relay(.finishSending(to: .client)))
        #expect(machine.isRelaying)
    }

    @Test func theClientsEndWaitsForItsBytesToReachTheUpstream() {
        var machine = relaying()
        let clientEnded = machine.relayPeerFinished(.client, undelivered: true)
        let upstreamEnded = machine.relayPeerFinished(.upstream, undelivered: false)
        let delivered = machine.relayDelivered(to: .upstream)
        #expect(clientEnded == .none)
        #expect(upstreamEnded == .finishSending(to: .client))
        #expect(delivered == .close)
    }

    @Test func deliveryWithoutAnEndChangesNothing() {
        var machine = relaying()
        let toUpstream = machine.relayDelivered(to: .upstream)
        let toClient = machine.relayDelivered(to: .client)
        let ended = machine.relayPeerFinished(.client, undelivered: false)
        // A second end of the same side is not an event.
        let endedAgain = machine.relayPeerFinished(.client, undelivered: false)
        #expect(toUpstream == .none)
        #expect(toClient == .none)
        #expect(ended == .finishSending(to: .upstream))
        #expect(endedAgain == .none)
    }

    @Test func shutdownLeavesTunnelsToEndOnTheirOwn() {
        var machine = relaying()
        let relayShutdown = machine.shutdown(outputPending: false)
        #expect(relayShutdown == .finishExchange)
        #expect(machine.isRelaying)
        var opening = ConnectionMachineTests().serving(Self.connect)
        _ = opening.tunnelOpened(.intercept)
        let openingShutdown = opening.shutdown(outputPending: true)
        #expect(openingShutdown == .finishExchange)
    }

    @Test func anUpgradedStreamHasNoIdleTimeoutUnlessOneIsSet() {
        let machine = relaying(.upgrade(webSocket: true))
        #expect(machine.timerDeadline(now: at(7), outputPending: false, settings: settings) == nil)
        let limited = ConnectionSettings(tunnelIdleTimeout: .seconds(600), upgradeIdleTimeout: .seconds(30))
        #expect(machine.timerDeadline(now: at(7), outputPending: false, settings: limited) == at(37))
        #expect(machine.timerFired(at: at(37)) == .tunnelIdle)
    }

    @Test func shutdownOwesAWebSocketCloseFramesAtItsFrameBoundaries() {
        var machine = relaying(.upgrade(webSocket: true))
        let shutdown = machine.shutdown(outputPending: false)
        #expect(shutdown == .closeWebSocket)
        #expect(machine.owesCloseFrame(towards: .client) && machine.owesCloseFrame(towards: .upstream))
        // Both sides are read until their frame ends.
        #expect(machine.wantsInput(bufferFull: false) && machine.wantsUpstreamInput(outputPending: 0, highWater: 1000))
        let toClient = machine.relayFrameBoundary(towards: .client)
        #expect(toClient == .sendClose(to: .client))
        #expect(!machine.wantsUpstreamInput(outputPending: 0, highWater: 1000))
        let again = machine.relayFrameBoundary(towards: .client)
        #expect(again == .none)
        let toUpstream = machine.relayFrameBoundary(towards: .upstream)
        #expect(toUpstream == .sendClose(to: .upstream))
        #expect(!machine.wantsInput(bufferFull: false))
        // Each direction ends once its close frame is delivered; then the tunnel closes.
        let clientDone = machine.relayOutputFlushed(pending: 0)
        let upstreamDone = machine.relayDelivered(to: .upstream)
        #expect(clientDone == .finishSending(to: .client))
        #expect(upstreamDone == .close)
    }

    @Test func aPeerThatEndsWhileClosingEndsItsDirection() {
        var machine = relaying(.upgrade(webSocket: true))
        _ = machine.shutdown(outputPending: false)
        let ended = machine.relayPeerFinished(.upstream, undelivered: false)
        #expect(ended == .finishSending(to: .client))
        #expect(!machine.owesCloseFrame(towards: .client))
    }

    @Test func onlyAWebSocketIsClosedAtShutdown() {
        var other = relaying(.upgrade(webSocket: false))
        let shutdown = other.shutdown(outputPending: false)
        #expect(shutdown == .finishExchange)
        #expect(!other.owesCloseFrame(towards: .client))
    }

    @Test func noCloseFrameIsOwedWhereAPeerAlreadySentOne() {
        var machine = relaying(.upgrade(webSocket: true))
        _ = machine.shutdown(outputPending: false)
        machine.relayCloseAlreadySent(towards: .client)
        #expect(!machine.owesCloseFrame(towards: .client) && machine.owesCloseFrame(towards: .upstream))
        // The direction is relayed on until its sender ends it.
        #expect(machine.wantsUpstreamInput(outputPending: 0, highWater: 1000))
        let boundary = machine.relayFrameBoundary(towards: .client)
        #expect(boundary == .none)
    }
}
