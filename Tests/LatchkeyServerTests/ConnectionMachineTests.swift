import LatchkeyHTTP
import LatchkeyLoop
@testable import LatchkeyServer
import Testing

/// The client connection's state machine, event by event: no sockets, no clock but the
/// instants the tests pass in.
struct ConnectionMachineTests {
    static let settings = ConnectionSettings(
        headTimeout: .seconds(10), idleTimeout: .seconds(60), bodyTimeout: .seconds(30),
        outboundHighWater: 1000, maxRequestBodyBytes: 100)
    let settings = Self.settings

    static func at(_ seconds: Int) -> LoopInstant {
        LoopInstant(nanoseconds: UInt64(seconds) * 1_000_000_000)
    }

    func at(_ seconds: Int) -> LoopInstant { Self.at(seconds) }

    static let get = RequestHead(method: "GET", target: "/")
    static let post = RequestHead(method: "POST", target: "/", framing: .length(10))
    static let postWithContinue = RequestHead(method: "POST", target: "/", framing: .length(10), expectsContinue: true)

    /// A machine that has decoded `head` at second 1 and whose head was delivered.
    func serving(_ head: RequestHead = Self.get, keepAlive: Bool = true) -> ConnectionMachine {
        var machine = ConnectionMachine(openedAt: at(0))
        machine.bytesArrived(at: at(1))
        _ = machine.headDecoded(head, at: at(1), keepAlive: keepAlive, settings: settings)
        return machine
    }

    func exchange(_ machine: ConnectionMachine) -> ConnectionMachine.Exchange? {
        if case .exchange(let exchange) = machine.state { return exchange }
        return nil
    }

    // MARK: a new connection

    @Test func newConnectionThatSendsNothingIsClosedAtTheHeadTimeoutNotTheIdleOne() {
        let machine = ConnectionMachine(openedAt: at(0))
        #expect(machine.timerDeadline(now: at(5), outputPending: false, settings: settings) == at(10))
        #expect(machine.timerFired(at: at(10)) == .close)
        #expect(machine.decodeStep == .head)
        #expect(machine.wantsInput(bufferFull: true))
    }

    @Test func firstHeadIsTimedFromTheAccept() {
        var machine = ConnectionMachine(openedAt: at(0))
        machine.bytesArrived(at: at(4))
        #expect(machine.state == .readingHead(since: at(0)))
        #expect(machine.timerDeadline(now: at(4), outputPending: false, settings: settings) == at(10))
    }

    @Test func shutdownClosesAnUnusedConnectionAtOnce() {
        var machine = ConnectionMachine(openedAt: at(0))
        let outcome = machine.shutdown(outputPending: false)
        #expect(outcome == .close)
    }

    // MARK: heads

    @Test func trickledHeadBytesDoNotExtendTheHeadClock() {
        var machine = ConnectionMachine(openedAt: at(0))
        machine.bytesArrived(at: at(1))
        machine.headIncomplete(bufferEmpty: false)
        machine.bytesArrived(at: at(8))
        machine.headIncomplete(bufferEmpty: false)
        #expect(machine.timerDeadline(now: at(8), outputPending: false, settings: settings) == at(10))
        guard case .headTimedOut(let document) = machine.timerFired(at: at(10)) else {
            Issue.record("expected a head timeout")
            return
        }
        #expect(document.status == 408)
    }

    /// Regression (was test_review_regressions.py): a stray CRLF between requests
    /// (RFC 9112 §2.2) is consumed whole; its clock must not time the next head.
    @Test func strayCRLFBetweenRequestsDoesNotStartTheHeadClock() {
        var machine = serving()
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: 0, version: .http1_1)
        _ = machine.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        #expect(machine.state == .idle)
        machine.bytesArrived(at: at(3))
        machine.headIncomplete(bufferEmpty: true)
        #expect(machine.state == .idle)
        machine.bytesArrived(at: at(20))
        machine.headIncomplete(bufferEmpty: false)
        #expect(machine.state == .readingHead(since: at(20)))
        #expect(machine.timerDeadline(now: at(20), outputPending: false, settings: settings) == at(30))
    }

    @Test func idleConnectionClosesAfterTheIdleTimeoutCountedFromTheLastActivity() {
        var machine = serving()
        _ = machine.responseHeadStarting(carriesBody: false, contentLength: nil, version: .http1_1)
        _ = machine.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        #expect(machine.timerDeadline(now: at(2), outputPending: false, settings: settings) == at(62))
        #expect(machine.timerDeadline(now: at(5), outputPending: true, settings: settings) == at(65))
        #expect(machine.timerFired(at: at(65)) == .close)
        let outcome = machine.shutdown(outputPending: false)
        #expect(outcome == .close)
    }

    @Test func bodilessHeadIsDeliveredWithItsBodyEnded() {
        var machine = ConnectionMachine(openedAt: at(0))
        machine.bytesArrived(at: at(1))
        let outcome = machine.headDecoded(Self.get, at: at(1), keepAlive: true, settings: settings)
        #expect(outcome == .deliverWithoutBody)
        #expect(exchange(machine) == .init(request: .complete, response: .waiting, keepAlive: true))
        #expect(machine.decodeStep == .none)
        // The handler is working and nothing waits on the client: no timer.
        #expect(machine.timerDeadline(now: at(2), outputPending: false, settings: settings) == nil)
    }

    @Test func headWithABodyStartsTheBodyClock() {
        var machine = ConnectionMachine(openedAt: at(0))
        machine.bytesArrived(at: at(1))
        let outcome = machine.headDecoded(Self.post, at: at(1), keepAlive: true, settings: settings)
        #expect(outcome == .deliver)
        #expect(exchange(machine)?.request == .reading(deadline: at(31)))
        #expect(machine.decodeStep == .body)
    }

    @Test func bodyLargerThanTheLimitByItsLengthIsRefusedAtTheHead() {
        var machine = ConnectionMachine(openedAt: at(0))
        let head = RequestHead(method: "POST", target: "/", framing: .length(101))
        guard case .reject(let document) = machine.headDecoded(head, at: at(1), keepAlive: true, settings: settings) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(document.status == 413)
        #expect(exchange(machine) == .init(request: .complete, response: .waiting, keepAlive: false))
    }

    @Test func bodyOverTheLimitWhileArrivingIsReported() {
        let machine = serving(Self.post)
        #expect(machine.bodyOverLimit(total: 100, settings: settings) == nil)
        #expect(machine.bodyOverLimit(total: 101, settings: settings)?.status == 413)
    }

    @Test func expectContinueIsHonouredOnlyForHTTP11() {
        #expect(exchange(serving(Self.postWithContinue))?.request == .awaitingContinue(budget: .seconds(30)))
        var old = Self.postWithContinue
        old.version = .http1_0
        #expect(exchange(serving(old))?.request == .reading(deadline: at(31)))
    }

    @Test func serverAnswersAMalformedHeadAndWillClose() {
        var machine = ConnectionMachine(openedAt: at(0))
        machine.bytesArrived(at: at(1))
        machine.serverAnswers()
        #expect(exchange(machine) == .init(request: .complete, response: .waiting, keepAlive: false))
    }

    // MARK: request bodies

    @Test func bodyEndCompletesTheRequest() {
        var machine = serving(Self.post)
        machine.bodyEnded()
        #expect(exchange(machine)?.request == .complete)
        #expect(machine.decodeStep == .none)
    }

    @Test func firstResumeSendsTheInterimResponseAndStartsTheBodyClock() {
        var machine = serving(Self.postWithContinue)
        #expect(machine.decodeStep == .none)
        let outcome = machine.setBodyPaused(true, at: at(2))
        #expect(outcome == .unchanged)
        let outcome2 = machine.setBodyPaused(false, at: at(5))
        #expect(outcome2 == .resumed(sendContinue: true))
        #expect(exchange(machine)?.request == .reading(deadline: at(35)))
        let outcome3 = machine.setBodyPaused(false, at: at(6))
        #expect(outcome3 == .unchanged)
    }

    @Test func pausedTimeDoesNotCountAgainstTheBodyTimeout() {
        var machine = serving(Self.post)
        let outcome = machine.setBodyPaused(true, at: at(11))
        #expect(outcome == .paused)
        #expect(exchange(machine)?.request == .paused(budget: .seconds(20)))
        #expect(machine.decodeStep == .none)
        #expect(machine.timerDeadline(now: at(50), outputPending: false, settings: settings) == nil)
        let outcome2 = machine.setBodyPaused(true, at: at(12))
        #expect(outcome2 == .unchanged)
        let outcome3 = machine.setBodyPaused(false, at: at(100))
        #expect(outcome3 == .resumed(sendContinue: false))
        #expect(exchange(machine)?.request == .reading(deadline: at(120)))
    }

    @Test func pausingACompleteRequestChangesNothing() {
        var machine = serving()
        let outcome = machine.setBodyPaused(true, at: at(2))
        #expect(outcome == .unchanged)
        let outcome2 = machine.setBodyPaused(false, at: at(2))
        #expect(outcome2 == .unchanged)
    }

    /// Regression (a body trickled one byte at a time kept a connection for minutes): the
    /// body has a total limit besides the idle one.
    @Test func trickledBodyTimesOutAtTheBodyTimeoutWithA408() {
        let machine = serving(Self.post)
        // Each byte restarts the idle clock, but never past the body's deadline.
        #expect(machine.timerDeadline(now: at(2), outputPending: false, settings: settings) == at(31))
        #expect(machine.timerFired(at: at(20)) == .close)
        guard case .bodyTimedOut(let document) = machine.timerFired(at: at(31)) else {
            Issue.record("expected a body timeout")
            return
        }
        #expect(document.status == 408)
        #expect(machine.bodyFailureIsAnswerable)
    }

    @Test func silentClientWhileReadingABodyIsClosedAtTheIdleTimeout() {
        let settings = ConnectionSettings(idleTimeout: .seconds(5), bodyTimeout: .seconds(30))
        var machine = ConnectionMachine(openedAt: at(0))
        _ = machine.headDecoded(Self.post, at: at(1), keepAlive: true, settings: settings)
        #expect(machine.timerDeadline(now: at(2), outputPending: false, settings: settings) == at(7))
        #expect(machine.timerFired(at: at(7)) == .close)
    }

    @Test func bodyFailureAfterTheResponseStartedCutsTheResponse() {
        var machine = serving(Self.post)
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: nil, version: .http1_1)
        #expect(!machine.bodyFailureIsAnswerable)
        #expect(!ConnectionMachine(openedAt: at(0)).bodyFailureIsAnswerable)
    }

    /// The state half of the reset-client regression: with a full buffer during an exchange
    /// the connection has no read interest (so the glue must close on a hang-up epoll reports
    /// anyway; test_review_regressions.py keeps that socket half).
    @Test func fullInputBufferStopsReadingDuringAnExchangeButNotForAHead() {
        #expect(!serving().wantsInput(bufferFull: true))
        #expect(serving().wantsInput(bufferFull: false))
        var machine = ConnectionMachine(openedAt: at(0))
        machine.bytesArrived(at: at(1))
        #expect(machine.isAwaitingHead)
        #expect(machine.wantsInput(bufferFull: true))
        #expect(!serving().isAwaitingHead)
    }

    // MARK: response heads

    @Test func responseFramingFollowsTheStatusTheLengthAndTheVersion() {
        var bodiless = serving()
        let outcome = bodiless.responseHeadStarting(carriesBody: false, contentLength: 5, version: .http1_1)
        #expect(outcome == .init(framing: .bodiless))
        var length = serving()
        let outcome2 = length.responseHeadStarting(carriesBody: true, contentLength: 5, version: .http1_1)
        #expect(outcome2 == .init(framing: .length(remaining: 5)))
        var chunked = serving()
        let outcome3 = chunked.responseHeadStarting(carriesBody: true, contentLength: nil, version: .http1_1)
        #expect(outcome3 == .init(framing: .chunked))
        var old = serving()
        let outcome4 = old.responseHeadStarting(carriesBody: true, contentLength: nil, version: .http1_0)
        #expect(outcome4
            == .init(framing: .closeDelimited, connection: .close))
        var oldWithLength = serving()
        let outcome5 = oldWithLength.responseHeadStarting(carriesBody: true, contentLength: 1, version: .http1_0)
        #expect(outcome5
            == .init(framing: .length(remaining: 1), connection: .keepAlive))
        var closing = serving(keepAlive: false)
        let outcome6 = closing.responseHeadStarting(carriesBody: true, contentLength: 1, version: .http1_1)
        #expect(outcome6
            == .init(framing: .length(remaining: 1), connection: .close))
    }

    @Test func secondResponseHeadIsIgnored() {
        var machine = serving()
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: 1, version: .http1_1)
        let outcome = machine.responseHeadStarting(carriesBody: true, contentLength: 1, version: .http1_1)
        #expect(outcome == nil)
        #expect(ConnectionMachine(openedAt: at(0)).decodeStep == .head)
        var idle = ConnectionMachine(openedAt: at(0))
        let outcome2 = idle.responseHeadStarting(carriesBody: true, contentLength: 1, version: .http1_1)
        #expect(outcome2 == nil)
    }

    @Test func answeringBeforeTheBodyArrivedClosesTheConnection() {
        var machine = serving(Self.post)
        let outcome = machine.responseHeadStarting(carriesBody: true, contentLength: 1, version: .http1_1)
        #expect(outcome?.connection == .close)
    }

    @Test func answeringAClientWaitingFor100ContinueClosesAndNeverSendsIt() {
        var machine = serving(Self.postWithContinue)
        let outcome = machine.responseHeadStarting(carriesBody: true, contentLength: 1, version: .http1_1)
        #expect(outcome?.connection == .close)
        #expect(exchange(machine)?.request == .paused(budget: .seconds(30)))
        let outcome2 = machine.setBodyPaused(false, at: at(3))
        #expect(outcome2 == .resumed(sendContinue: false))
    }

    // MARK: response bodies and backpressure

    @Test func bodyBytesBeforeTheHeadOrOnABodilessResponseAreDiscarded() {
        var machine = serving()
        let outcome = machine.responseBody(count: 3)
        #expect(outcome == .discard)
        _ = machine.responseHeadStarting(carriesBody: false, contentLength: nil, version: .http1_1)
        let outcome2 = machine.responseBody(count: 3)
        #expect(outcome2 == .discard)
    }

    @Test func lengthFramingNeverWritesMoreThanPromised() {
        var machine = serving()
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: 5, version: .http1_1)
        let outcome = machine.responseBody(count: 3)
        #expect(outcome == .raw(count: 3))
        let outcome2 = machine.responseBody(count: 3)
        #expect(outcome2 == .raw(count: 2))
        let outcome3 = machine.responseBody(count: 3)
        #expect(outcome3 == .raw(count: 0))
    }

    @Test func chunkedAndCloseDelimitedBodiesTakeEverything() {
        var chunked = serving()
        _ = chunked.responseHeadStarting(carriesBody: true, contentLength: nil, version: .http1_1)
        let outcome = chunked.responseBody(count: 7)
        #expect(outcome == .chunk)
        var old = serving()
        _ = old.responseHeadStarting(carriesBody: true, contentLength: nil, version: .http1_0)
        let outcome2 = old.responseBody(count: 7)
        #expect(outcome2 == .raw(count: 7))
    }

    @Test func overTheHighWaterMarkTheHandlerWaitsUntilBelowAQuarter() {
        var machine = serving()
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: nil, version: .http1_1)
        let outcome = machine.outputQueued(pending: 999, highWater: 1000)
        #expect(outcome)
        let outcome2 = machine.outputQueued(pending: 1000, highWater: 1000)
        #expect(!outcome2)
        #expect(!machine.acceptsResponseBody)
        let outcome3 = machine.outputQueued(pending: 10, highWater: 1000)
        #expect(!outcome3)
        let outcome4 = machine.outputFlushed(pending: 251, highWater: 1000)
        #expect(outcome4 == .none)
        let outcome5 = machine.outputFlushed(pending: 250, highWater: 1000)
        #expect(outcome5 == .drained)
        #expect(machine.acceptsResponseBody)
        let outcome6 = machine.outputFlushed(pending: 0, highWater: 1000)
        #expect(outcome6 == .none)
        #expect(ConnectionMachine(openedAt: at(0)).acceptsResponseBody)
        var waiting = serving()
        let outcome7 = waiting.outputQueued(pending: 5000, highWater: 1000)
        #expect(outcome7)
    }

    @Test func pendingOutputTimesTheClientWhileTheHandlerWorks() {
        var machine = serving()
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: nil, version: .http1_1)
        #expect(machine.timerDeadline(now: at(3), outputPending: true, settings: settings) == at(63))
        #expect(machine.timerDeadline(now: at(3), outputPending: false, settings: settings) == nil)
        #expect(machine.timerFired(at: at(63)) == .close)
    }

    // MARK: the end of an exchange

    @Test func finishingShortOfTheLengthCutsTheResponse() {
        var machine = serving()
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: 5, version: .http1_1)
        _ = machine.responseBody(count: 3)
        let outcome = machine.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        #expect(outcome == .cutShort)
        machine.responseAborted()
        #expect(machine.state == .closingAfterFlush)
    }

    @Test func finishedChunkedResponseEndsWithTheLastChunkAndKeepsTheConnection() {
        var machine = serving()
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: nil, version: .http1_1)
        let outcome = machine.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        #expect(outcome == .ended(lastChunk: true))
        #expect(machine.state == .idle)
    }

    @Test func pipelinedBytesStartTheNextHeadClockWhenTheResponseEnds() {
        var machine = serving()
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: 0, version: .http1_1)
        let outcome = machine.responseFinished(at: at(7), inputBuffered: true, mayKeepAlive: true)
        #expect(outcome == .ended(lastChunk: false))
        #expect(machine.state == .readingHead(since: at(7)))
        #expect(machine.decodeStep == .head)
    }

    @Test func connectionClosesAfterTheResponseWhenItCannotBeKept() {
        var closeDelimited = serving()
        _ = closeDelimited.responseHeadStarting(carriesBody: true, contentLength: nil, version: .http1_0)
        _ = closeDelimited.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        #expect(closeDelimited.state == .closingAfterFlush)
        var shuttingDown = serving()
        _ = shuttingDown.responseHeadStarting(carriesBody: true, contentLength: 0, version: .http1_1)
        _ = shuttingDown.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: false)
        #expect(shuttingDown.state == .closingAfterFlush)
        var bodyUnread = serving(Self.post)
        _ = bodyUnread.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        #expect(bodyUnread.state == .closingAfterFlush)
        var answeredWithoutAHead = serving()
        let outcome = answeredWithoutAHead.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        #expect(outcome == .ended(lastChunk: false))
        #expect(answeredWithoutAHead.state == .idle)
    }

    @Test func shutdownLetsTheExchangeFinishThenCloses() {
        var machine = serving()
        let outcome = machine.shutdown(outputPending: false)
        #expect(outcome == .finishExchange)
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: 0, version: .http1_1)
        _ = machine.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        #expect(machine.state == .closingAfterFlush)
        let outcome2 = machine.shutdown(outputPending: false)
        #expect(outcome2 == .finishExchange)
    }

    @Test func shutdownFlushesThenClosesAConnectionBetweenRequests() {
        var draining = serving()
        _ = draining.responseHeadStarting(carriesBody: true, contentLength: 0, version: .http1_1)
        _ = draining.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        let outcome = draining.shutdown(outputPending: true)
        #expect(outcome == .flushThenClose)
        #expect(draining.state == .closingAfterFlush)
        var partialHead = ConnectionMachine(openedAt: at(0))
        partialHead.bytesArrived(at: at(1))
        let outcome2 = partialHead.shutdown(outputPending: false)
        #expect(outcome2 == .flushThenClose)
    }

    // MARK: closing

    @Test func closingAfterFlushLingersOnceEverythingIsWritten() {
        var machine = serving(keepAlive: false)
        _ = machine.responseHeadStarting(carriesBody: true, contentLength: 0, version: .http1_1)
        _ = machine.responseFinished(at: at(2), inputBuffered: false, mayKeepAlive: true)
        #expect(!machine.wantsInput(bufferFull: false))
        #expect(machine.decodeStep == .none)
        #expect(machine.timerDeadline(now: at(3), outputPending: true, settings: settings) == at(63))
        let outcome = machine.outputFlushed(pending: 10, highWater: 1000)
        #expect(outcome == .none)
        let outcome2 = machine.outputFlushed(pending: 0, highWater: 1000)
        #expect(outcome2 == .linger)
    }

    @Test func lingeringEndsAfterTheLingerTime() {
        var machine = ConnectionMachine(openedAt: at(0))
        let outcome = machine.linger(at: at(4))
        #expect(outcome)
        #expect(machine.isLingering)
        let outcome2 = machine.linger(at: at(5))
        #expect(!outcome2)
        #expect(!machine.wantsInput(bufferFull: false))
        #expect(machine.timerDeadline(now: at(5), outputPending: false, settings: settings) == at(6))
        #expect(machine.timerFired(at: at(6)) == .close)
        let outcome3 = machine.shutdown(outputPending: false)
        #expect(outcome3 == .finishExchange)
    }

    @Test func closeHappensOnce() {
        var machine = serving()
        let outcome = machine.close()
        #expect(outcome)
        #expect(machine.isClosed)
        let outcome2 = machine.close()
        #expect(!outcome2)
        let outcome3 = machine.linger(at: at(2))
        #expect(!outcome3)
        #expect(machine.timerDeadline(now: at(2), outputPending: true, settings: settings) == nil)
        #expect(machine.decodeStep == .none)
        #expect(!machine.wantsInput(bufferFull: false))
        machine.responseAborted()
        #expect(machine.isClosed)
    }
}
