import LatchkeyHTTP
import LatchkeyLoop
import Testing
@testable import LatchkeyUpstream

/// The transfer machine driven event by event: no curl, no sockets, no clock.
struct TransferMachineTests {
    static let t0 = LoopInstant(nanoseconds: 1_000_000_000)
    static let idle = Duration.seconds(10)

    static func at(_ seconds: Int) -> LoopInstant { t0.advanced(by: .seconds(seconds)) }

    static func machine(_ body: UpstreamBody = .none) -> TransferMachine {
        TransferMachine(body: body, idleTimeout: idle, now: t0)
    }

    /// Feeds a header line.
    static func header(_ machine: inout TransferMachine, _ line: String, at now: LoopInstant = t0) -> TransferMachine.HeaderStep {
        Array((line + "\r\n").utf8).withUnsafeBytes { machine.headerLine($0, now: now) }
    }

    /// Feeds a complete head.
    static func head(_ machine: inout TransferMachine, status: String = "200 OK") {
        _ = header(&machine, "HTTP/1.1 \(status)")
        _ = header(&machine, "Content-Length: 2")
        _ = header(&machine, "")
    }

    /// Queues `text` as request body.
    static func send(_ machine: inout TransferMachine, _ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { machine.bodyAvailable($0) }
    }

    /// curl's read callback with a buffer of `capacity`; returns the step and the bytes copied.
    static func read(_ machine: inout TransferMachine, capacity: Int = 64, at now: LoopInstant = t0) -> (TransferMachine.ReadStep, String) {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let step = buffer.withUnsafeMutableBytes { machine.read(into: $0.baseAddress!, capacity: capacity, now: now) }
        if case .copied(let n, _) = step { return (step, String(decoding: buffer.prefix(n), as: UTF8.self)) }
        return (step, "")
    }

    static let timedOut = UpstreamError(.other, detail: "start failed")

    // MARK: starting

    @Test func aRequestWithoutBodyIsSentAtOnceAndTimesItsFirstByte() {
        var m = Self.machine()
        #expect(m.state == .running(.done, .awaitingHead(timed: false)))
        #expect(m.started() == true)
        #expect(m.state == .running(.done, .awaitingHead(timed: true)))
        #expect(Self.read(&m).0 == .end(startFirstByteTimer: false))
    }

    @Test func anEmptySizedBodyIsDoneAtOnce() {
        var m = Self.machine(.length(0))
        #expect(m.started() == true)
    }

    @Test(arguments: [UpstreamBody.length(5), .streaming])
    func aRequestWithBodyTimesItsFirstByteOnlyOnceSent(body: UpstreamBody) {
        var m = Self.machine(body)
        #expect(m.started() == false)
        #expect(m.state == .running(.open(paused: false), .awaitingHead(timed: false)))
    }

    // MARK: request body

    @Test func readPausesUntilTheClientSendsThenCopiesAndAsksOncePerStall() {
        var m = Self.machine(.streaming)
        #expect(Self.read(&m).0 == .pause)
        #expect(m.state == .running(.open(paused: true), .awaitingHead(timed: false)))
        #expect(m.wantsBody)
        #expect(Self.send(&m, "hello") == true)
        #expect(!m.wantsBody)
        #expect(m.queuedBodyBytes == 5)
        // Waking the read side: bytes are queued, so it is unpaused.
        #expect(m.pauseToApply()! == (receive: false, send: false))
        #expect(m.state == .running(.open(paused: false), .awaitingHead(timed: false)))
        let (step, text) = Self.read(&m, capacity: 3)
        #expect(step == .copied(3, startFirstByteTimer: false))
        #expect(text == "hel")
        #expect(Self.read(&m).1 == "lo")
        #expect(m.bytesSent == 5)
        // More bytes while not paused do not need a wake-up.
        #expect(Self.send(&m, "x") == false)
        #expect(Self.read(&m).1 == "x")
        #expect(Self.read(&m).0 == .pause)
    }

    @Test func theEndOfTheBodyWakesAPausedReadSideAndStartsTheFirstByteTimer() {
        var m = Self.machine(.streaming)
        #expect(Self.read(&m).0 == .pause)
        #expect(m.bodyEnded() == true)
        #expect(m.state == .running(.closing(paused: true), .awaitingHead(timed: false)))
        #expect(!m.wantsBody)
        #expect(m.pauseToApply()! == (receive: false, send: false))
        #expect(Self.read(&m).0 == .end(startFirstByteTimer: true))
        #expect(m.state == .running(.done, .awaitingHead(timed: true)))
        // Later reads, and bytes after the end, change nothing.
        #expect(Self.read(&m).0 == .end(startFirstByteTimer: false))
        #expect(Self.send(&m, "late") == false)
        #expect(m.bodyEnded() == false)
        #expect(m.queuedBodyBytes == 0)
    }

    @Test func theEndWhileNotPausedNeedsNoWakeUpAndQueuedBytesGoFirst() {
        var m = Self.machine(.streaming)
        _ = Self.send(&m, "ab")
        #expect(m.bodyEnded() == false)
        #expect(Self.read(&m).1 == "ab")
        #expect(Self.read(&m).0 == .end(startFirstByteTimer: true))
    }

    @Test func aSizedBodyIsSentWithItsLastByteAndEndsAtItsLength() {
        var m = Self.machine(.length(5))
        _ = Self.send(&m, "ab")
        #expect(Self.read(&m).0 == .copied(2, startFirstByteTimer: false))
        _ = Self.send(&m, "cdef")
        // curl asks for no more once it has the length: the last byte starts the timer.
        #expect(Self.read(&m).0 == .copied(3, startFirstByteTimer: true))
        #expect(m.state == .running(.done, .awaitingHead(timed: true)))
        #expect(Self.read(&m).0 == .end(startFirstByteTimer: false))
        #expect(m.bytesSent == 5)
    }

    @Test func aBodyEndingAfterTheHeadDoesNotStartTheFirstByteTimer() {
        var m = Self.machine(.streaming)
        Self.head(&m, status: "413 Content Too Large")
        #expect(m.bodyEnded() == false)
        #expect(Self.read(&m).0 == .end(startFirstByteTimer: false))
        #expect(m.state == .running(.done, .streaming(paused: false)))
    }

    @Test func emptyBytesAreIgnored() {
        var m = Self.machine(.streaming)
        #expect(Self.read(&m).0 == .pause)
        #expect(Self.send(&m, "") == false)
        #expect(m.wantsBody)
    }

    // MARK: response head

    @Test func theHeadIsDeliveredAtItsEmptyLineAndTheFirstByteStopsTheTimer() {
        var m = Self.machine()
        _ = m.started()
        #expect(Self.header(&m, "HTTP/1.1 100 Continue") == .takeFirst)
        #expect(m.state == .running(.done, .readingHead))
        #expect(Self.header(&m, "") == .take)
        #expect(Self.header(&m, "HTTP/1.1 204 No Content") == .take)
        #expect(Self.header(&m, "X-A: 1") == .take)
        var fields = HTTPFields()
        fields.append(HTTPField(name: "X-A", value: "1"))
        #expect(Self.header(&m, "") == .deliver(status: 204, fields: fields))
        #expect(m.state == .running(.done, .streaming(paused: false)))
        // Trailers after the head are taken and ignored.
        #expect(Self.header(&m, "X-Trailer: t") == .take)
        #expect(m.outcome(curlError: nil) == nil)
    }

    @Test func aHeaderLineBeforeTheRequestIsSentIsNotTheTimedFirstByte() {
        var m = Self.machine(.streaming)
        #expect(Self.header(&m, "HTTP/1.1 200 OK") == .take)
        #expect(m.state == .running(.open(paused: false), .readingHead))
    }

    @Test func aMalformedHeadLineFailsTheTransfer() {
        var m = Self.machine()
        _ = m.started()
        _ = Self.header(&m, "HTTP/1.1 200 OK")
        #expect(Self.header(&m, " folded") == .refuse)
        let error = UpstreamError(.other, detail: "malformed response head line")
        #expect(m.state == .failing(error))
        // curl then finishes with CURLE_WRITE_ERROR; the reason reported is ours.
        #expect(m.outcome(curlError: UpstreamError(.other, detail: "write error")) == error)
    }

    @Test func curlFinishingWithoutAHeadIsAReceiveFailure() {
        var m = Self.machine()
        #expect(m.outcome(curlError: nil) == UpstreamError(.receiveFailed, detail: "no response head"))
        let reset = UpstreamError(.receiveFailed, detail: "reset")
        #expect(m.outcome(curlError: reset) == reset)
        Self.head(&m)
        #expect(m.outcome(curlError: reset) == reset)
    }

    // MARK: response body and backpressure

    @Test func bodyBytesAreDeliveredAndBackpressurePausesTheReceiveSide() {
        var m = Self.machine()
        Self.head(&m)
        #expect(m.bodyData(count: 4, now: Self.t0) == .deliver)
        #expect(m.delivered(more: true) == .take)
        #expect(m.bodyData(count: 6, now: Self.t0) == .deliver)
        #expect(m.delivered(more: false) == .takeAndPause(send: false))
        #expect(m.state == .running(.done, .streaming(paused: true)))
        // The rest of curl's write loop is held, and not counted.
        #expect(m.bodyData(count: 5, now: Self.t0) == .hold)
        #expect(m.bytesReceived == 10)
        #expect(m.resumeReceiving(now: Self.t0) == true)
        #expect(m.resumeReceiving(now: Self.t0) == false)
        #expect(m.pauseToApply()! == (receive: false, send: false))
        #expect(m.bodyData(count: 5, now: Self.t0) == .deliver)
        #expect(m.bytesReceived == 15)
    }

    @Test func pausingTheReceiveSideKeepsTheSendSidesPause() {
        var m = Self.machine(.streaming)
        Self.head(&m)
        #expect(Self.read(&m).0 == .pause)
        #expect(m.bodyData(count: 1, now: Self.t0) == .deliver)
        #expect(m.delivered(more: false) == .takeAndPause(send: true))
        #expect(m.pauseToApply()! == (receive: true, send: true))
        #expect(m.resumeReceiving(now: Self.t0) == true)
        #expect(m.pauseToApply()! == (receive: false, send: true))
    }

    @Test func aDelegateThatCancelsWhileHandedBytesRefusesThem() {
        var m = Self.machine()
        Self.head(&m)
        #expect(m.bodyData(count: 1, now: Self.t0) == .deliver)
        #expect(m.cancel() == true)
        #expect(m.delivered(more: true) == .refuse)
    }

    // MARK: timers

    @Test func theFirstByteTimerFailsATransferStillWaiting() {
        var m = Self.machine()
        #expect(m.firstByteTimerFired() == nil)
        _ = m.started()
        let error = UpstreamError(.firstByteTimeout, detail: "no response within the first-byte timeout")
        #expect(m.firstByteTimerFired() == error)
        #expect(m.state == .failing(error))
        #expect(m.outcome(curlError: nil) == error)
    }

    @Test func theFirstByteTimerIsMootOnceAByteCame() {
        var m = Self.machine()
        _ = m.started()
        _ = Self.header(&m, "HTTP/1.1 200 OK")
        #expect(m.firstByteTimerFired() == nil)
        #expect(m.isRunning)
    }

    @Test func theIdleTimerCountsFromTheLastActivity() {
        var m = Self.machine()
        Self.head(&m)
        #expect(m.bodyData(count: 1, now: Self.at(4)) == .deliver)
        _ = m.delivered(more: true)
        #expect(m.idleTimerFired(now: Self.at(10)) == .rearm(at: Self.at(14)))
        let error = UpstreamError(.idleTimeout, detail: "upstream idle for longer than the idle timeout")
        #expect(m.idleTimerFired(now: Self.at(14)) == .fail(error))
        #expect(m.state == .failing(error))
        #expect(m.idleTimerFired(now: Self.at(30)) == .ignore)
    }

    @Test func theIdleTimerWaitsWhileWeHoldTheTransfer() {
        // Waiting for the delegate to drain.
        var draining = Self.machine()
        Self.head(&draining)
        _ = draining.bodyData(count: 1, now: Self.t0)
        _ = draining.delivered(more: false)
        #expect(draining.idleTimerFired(now: Self.at(50)) == .rearm(at: Self.at(60)))
        // Waiting for the client's body.
        var uploading = Self.machine(.streaming)
        _ = Self.read(&uploading)
        #expect(uploading.idleTimerFired(now: Self.at(50)) == .rearm(at: Self.at(60)))
        // The first-byte timeout is the one that applies.
        var waiting = Self.machine()
        _ = waiting.started()
        #expect(waiting.idleTimerFired(now: Self.at(50)) == .rearm(at: Self.at(60)))
        // Bytes queued for curl while its read side is still paused: curl's turn, counted.
        var queued = Self.machine(.streaming)
        _ = Self.read(&queued)
        _ = Self.send(&queued, "x")
        #expect(queued.idleTimerFired(now: Self.at(50)) == .fail(UpstreamError(.idleTimeout, detail: "upstream idle for longer than the idle timeout")))
    }

    // MARK: ending

    @Test func aFailureStandsAndMakesEveryCallbackRefuse() {
        var m = Self.machine(.streaming)
        _ = Self.send(&m, "queued")
        #expect(m.fail(Self.timedOut) == true)
        #expect(m.fail(UpstreamError(.idleTimeout, detail: "later")) == false)
        #expect(m.failure == Self.timedOut)
        #expect(m.queuedBodyBytes == 0)
        #expect(Self.read(&m).0 == .abort)
        #expect(Self.header(&m, "HTTP/1.1 200 OK") == .refuse)
        #expect(m.bodyData(count: 1, now: Self.t0) == .refuse)
        #expect(m.delivered(more: true) == .refuse)
        #expect(m.pauseToApply() == nil)
        #expect(m.resumeReceiving(now: Self.t0) == false)
        #expect(Self.send(&m, "x") == false)
        #expect(m.bodyEnded() == false)
        #expect(!m.wantsBody)
        #expect(m.started() == false)
        #expect(m.outcome(curlError: nil) == Self.timedOut)
        // The finish is reported once.
        #expect(m.finish() == true)
        #expect(m.state == .finished)
        #expect(m.finish() == false)
        #expect(m.cancel() == false)
        #expect(m.fail(Self.timedOut) == false)
    }

    @Test func cancelIsFinalAndSilent() {
        var m = Self.machine(.streaming)
        _ = Self.send(&m, "queued")
        #expect(m.cancel() == true)
        #expect(m.state == .cancelled)
        #expect(m.isOver)
        #expect(m.queuedBodyBytes == 0)
        #expect(m.cancel() == false)
        #expect(m.finish() == false)
        #expect(m.fail(Self.timedOut) == false)
        #expect(Self.read(&m).0 == .abort)
        #expect(Self.header(&m, "HTTP/1.1 200 OK") == .refuse)
    }

    @Test func aCompleteResponseFinishes() {
        var m = Self.machine()
        Self.head(&m)
        #expect(m.finish() == true)
        #expect(m.isOver)
        #expect(!m.isRunning)
        #expect(m.bodyData(count: 1, now: Self.t0) == .refuse)
    }
}
