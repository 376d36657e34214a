import LatchkeyHTTP
import LatchkeyLoop
@testable import LatchkeyServer
import Testing

/// A TLS listener's connection machine before HTTP: the handshake's own timeout, its end
/// starting the head clock, a plain-HTTP client refused. No sockets, no clock.
struct ConnectionMachineHandshakeTests {
    let settings = ConnectionMachineTests.settings

    func at(_ seconds: Int) -> LoopInstant { ConnectionMachineTests.at(seconds) }

    func handshaking() -> ConnectionMachine {
        ConnectionMachine(handshakingSince: at(0), timeout: .seconds(3))
    }

    @Test func aHandshakeIsTimedByTheHandshakeTimeoutNotTheHeadOne() {
        let machine = handshaking()
        #expect(machine.isHandshaking)
        #expect(machine.timerDeadline(now: at(1), outputPending: false, settings: settings) == at(3))
        #expect(machine.timerFired(at: at(3)) == .handshakeTimedOut(after: .seconds(3)))
    }

    @Test func noHTTPIsDecodedDuringTheHandshakeButTheSocketIsRead() {
        var machine = handshaking()
        #expect(machine.decodeStep == .none)
        #expect(!machine.isAwaitingHead)
        #expect(machine.wantsInput(bufferFull: false))
        machine.bytesArrived(at: at(1))
        #expect(machine.state == .handshaking(since: at(0), timeout: .seconds(3)))
    }

    @Test func theHeadClockStartsWhenTheHandshakeCompletes() {
        var machine = handshaking()
        machine.handshakeCompleted(at: at(2))
        #expect(machine.state == .opened(at: at(2)))
        #expect(machine.timerDeadline(now: at(2), outputPending: false, settings: settings) == at(12))
        machine.bytesArrived(at: at(5))
        #expect(machine.state == .readingHead(since: at(2)))
    }

    @Test func aCompletedHandshakeIsNotCompletedAgain() {
        var machine = handshaking()
        machine.handshakeCompleted(at: at(2))
        machine.bytesArrived(at: at(3))
        machine.handshakeCompleted(at: at(4))
        #expect(machine.state == .readingHead(since: at(2)))
    }

    @Test func plainHTTPIsAnswered400AndTheConnectionClosesAfterIt() {
        var machine = handshaking()
        let document = machine.plainHTTPArrived()
        #expect(document.status == 400 && document.error == "plain_http_to_tls_port")
        #expect(!machine.isHandshaking)
        let plan = machine.responseHeadStarting(carriesBody: true, contentLength: 10, version: .http1_1)
        #expect(plan?.connection == .close)
        #expect(machine.responseBody(count: 10) == .raw(count: 10))
        #expect(machine.responseFinished(at: at(1), inputBuffered: false, mayKeepAlive: true) == .ended(lastChunk: false))
        #expect(machine.state == .closingAfterFlush)
        #expect(machine.outputFlushed(pending: 0, highWater: 1000) == .linger)
    }

    @Test func shutdownClosesAConnectionStillHandshaking() {
        var machine = handshaking()
        #expect(machine.shutdown(outputPending: false) == .close)
    }

    @Test func aPlainListenersConnectionNeverHandshakes() {
        let machine = ConnectionMachine(openedAt: at(0))
        #expect(!machine.isHandshaking)
        #expect(machine.timerDeadline(now: at(0), outputPending: false, settings: settings) == at(10))
    }
}
