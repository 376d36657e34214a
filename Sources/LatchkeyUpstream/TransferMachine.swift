import LatchkeyHTTP
import LatchkeyLoop

/// One upstream transfer's state, as a value: curl's callbacks, the delegate's calls and the
/// timers come in as events, and each returns what the glue (`CurlTransfer`) must do —
/// the value a curl callback returns, a curl_easy_pause to apply, a timer to arm, a delegate
/// call to make, a finish to report. No curl, no loop, no clock: time comes with the events.
///
/// While running, the two directions move on their own: the upstream may answer (even
/// completely) before the request body is sent. Then exactly one of `failing` (we decided
/// the transfer fails; curl's callbacks refuse and the finish follows), `finished` and
/// `cancelled` (silent) ends it.
///
/// An upgraded stream (WebSocket, after `101 Switching Protocols` over curl's CONNECT_ONLY
/// connection) is a later `Response` state after `readingHead`: `upgraded`, where bytes go
/// both ways outside HTTP framing and neither `Upload` nor the body steps apply.
struct TransferMachine {
    enum State: Equatable {
        case running(Upload, Response)
        /// Aborted by us (a timeout, a failed start or pause, a malformed head): curl's
        /// callbacks refuse, and the transfer finishes with this error.
        case failing(UpstreamError)
        /// Reported to the delegate (or abandoned with its client).
        case finished
        /// `cancel()`: final and silent.
        case cancelled
    }

    /// The request body, as curl takes it from the queue.
    enum Upload: Equatable {
        /// The client may send more. `paused`: curl's read side waits for it
        /// (CURL_READFUNC_PAUSE) and nothing has woken it yet.
        case open(paused: Bool)
        /// The client's body ended; what is queued still goes out.
        case closing(paused: Bool)
        /// curl has been told the body ended, or there was none.
        case done
    }

    /// The response, as curl hands it over.
    enum Response: Equatable {
        /// No byte yet. `timed`: the request is sent and the first-byte timer runs.
        case awaitingHead(timed: Bool)
        /// Header lines (interim heads included) are arriving.
        case readingHead
        /// The final head was delivered; body bytes follow. `paused`: the delegate asked
        /// for no more (backpressure) and curl's receive side is paused.
        case streaming(paused: Bool)
    }

    private(set) var state: State
    /// Request-body bytes curl may still take (`.length`), or UInt64.max.
    private var uploadRemaining: UInt64
    private var queue = ByteQueue()
    private var parser = ResponseHeadParser()
    private var idle: IdleClock
    /// Request-body bytes handed to curl.
    private(set) var bytesSent: UInt64 = 0
    /// Response-body bytes handed to the delegate.
    private(set) var bytesReceived: UInt64 = 0

    init(body: UpstreamBody, idleTimeout: Duration, now: LoopInstant) {
        idle = IdleClock(timeout: idleTimeout, now: now)
        let upload: Upload
        switch body {
        case .none:
            uploadRemaining = 0
            upload = .done
        case .length(let length):
            uploadRemaining = length
            upload = length == 0 ? .done : .open(paused: false)
            queue = ByteQueue(reserving: Int(min(length, UInt64(UpstreamBody.highWater))))
        case .streaming:
            uploadRemaining = .max
            upload = .open(paused: false)
            // As much as curl takes in one read: a chunked body that comes faster than
            // the upstream takes it then never regrows the queue on its way to that.
            queue = ByteQueue(reserving: CurlTransfer.curlUploadBufferSize)
        }
        state = .running(upload, .awaitingHead(timed: false))
    }

    /// Neither failing nor over: curl's callbacks are served.
    var isRunning: Bool {
        if case .running = state { return true }
        return false
    }

    /// Over (finished or cancelled): nothing is reported any more.
    var isOver: Bool { state == .finished || state == .cancelled }

    /// Request-body bytes queued and not yet taken by curl.
    var queuedBodyBytes: Int { queue.count }

    /// What a finish reports: `failing`'s error is the one.
    var failure: UpstreamError? {
        if case .failing(let error) = state { return error }
        return nil
    }

    // MARK: lifecycle

    /// The transfer is in the multi. Returns true when the first-byte timer starts now (a
    /// request without a body is sent at once).
    mutating func started() -> Bool {
        guard case .running(.done, .awaitingHead(timed: false)) = state else { return false }
        state = .running(.done, .awaitingHead(timed: true))
        return true
    }

    /// We decided the transfer fails. Returns false when it is failing or over already
    /// (the first reason stands).
    mutating func fail(_ error: UpstreamError) -> Bool {
        guard isRunning else { return false }
        state = .failing(error)
        queue.removeAll()
        return true
    }

    /// curl finished the transfer with `curlError` (nil: CURLE_OK). Returns what to report.
    func outcome(curlError: UpstreamError?) -> UpstreamError? {
        switch state {
        case .failing(let error):
            return error
        case .running(_, .streaming):
            return curlError
        default:
            return curlError ?? UpstreamError(.receiveFailed, detail: "no response head")
        }
    }

    /// The finish is being reported. Returns false when it is over already.
    mutating func finish() -> Bool {
        guard !isOver else { return false }
        state = .finished
        queue.removeAll()
        return true
    }

    /// The client went away. Returns false when it is over already.
    mutating func cancel() -> Bool {
        guard !isOver else { return false }
        state = .cancelled
        queue.removeAll()
        return true
    }
}

/// The request body: the client's bytes in, curl's read callback out.
extension TransferMachine {
    /// The delegate queued request-body bytes (copied). Returns true when curl's paused read
    /// side must be woken. Ignored once the body ended or the transfer stopped running.
    mutating func bodyAvailable(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard case .running(.open(let paused), _) = state, bytes.count > 0 else { return false }
        queue.append(bytes)
        return paused
    }

    /// The client's body ended. Returns true when curl's paused read side must be woken.
    mutating func bodyEnded() -> Bool {
        guard case .running(.open(let paused), let response) = state else { return false }
        state = .running(.closing(paused: paused), response)
        return paused
    }

    /// curl wants up to `capacity` request-body bytes in `buffer`.
    mutating func read(into buffer: UnsafeMutableRawPointer, capacity: Int, now: LoopInstant) -> ReadStep {
        guard case .running(let upload, let response) = state else { return .abort }
        if upload != .done, !queue.isEmpty, uploadRemaining > 0 {
            let limit = UInt64(capacity) < uploadRemaining ? capacity : Int(uploadRemaining)
            let n = queue.read(into: buffer, capacity: limit)
            bytesSent &+= UInt64(n)
            idle.activity(at: now)
            guard uploadRemaining != .max else { return .copied(n, startFirstByteTimer: false) }
            uploadRemaining -= UInt64(n)
            // A sized body is sent with its last byte: curl does not ask for more.
            guard uploadRemaining == 0 else { return .copied(n, startFirstByteTimer: false) }
            return .copied(n, startFirstByteTimer: uploadDone(response))
        }
        switch upload {
        case .open where uploadRemaining > 0:
            state = .running(.open(paused: true), response)
            return .pause
        case .done:
            return .end(startFirstByteTimer: false)
        case .open, .closing:
            // The client's body ended and all of it went out, or a sized body reached its
            // length (RFC 9112 §6.2: whatever the client sends on is not part of it).
            return .end(startFirstByteTimer: uploadDone(response))
        }
    }

    /// The request is sent: the first-byte timer starts unless a response byte came
    /// already. Returns whether it starts.
    private mutating func uploadDone(_ response: Response) -> Bool {
        let timed = response == .awaitingHead(timed: false)
        state = .running(.done, timed ? .awaitingHead(timed: true) : response)
        return timed
    }

    /// The deferred request for more body is due: true while curl still waits for bytes
    /// that have not come.
    var wantsBody: Bool {
        guard case .running(.open(paused: true), _) = state else { return false }
        return queue.isEmpty
    }
}

/// The response: curl's header and write callbacks in, the delegate's head and body out.
extension TransferMachine {
    /// One complete header line.
    mutating func headerLine(_ line: UnsafeRawBufferPointer, now: LoopInstant) -> HeaderStep {
        guard case .running(let upload, let response) = state else { return .refuse }
        idle.activity(at: now)
        let first = response == .awaitingHead(timed: true)
        if case .awaitingHead = response { state = .running(upload, .readingHead) }
        switch parser.consume(line) {
        case .needMore, .interim, .ignored:
            return first ? .takeFirst : .take
        case .invalid:
            // Refusing the line aborts with CURLE_WRITE_ERROR; the finish reports why instead.
            _ = fail(UpstreamError(.other, detail: "malformed response head line"))
            return .refuse
        case .head(let status, let fields):
            state = .running(upload, .streaming(paused: false))
            return .deliver(status: status, fields: fields)
        }
    }

    /// `count` response-body bytes arrived.
    mutating func bodyData(count: Int, now: LoopInstant) -> BodyStep {
        guard case .running(_, let response) = state else { return .refuse }
        if response == .streaming(paused: true) { return .hold }
        idle.activity(at: now)
        bytesReceived &+= UInt64(count)
        return .deliver
    }

    /// The delegate took the bytes and wants `more`, or no more until `resumeReceiving`.
    mutating func delivered(more: Bool) -> AfterBody {
        guard case .running(let upload, _) = state else { return .refuse }
        guard !more else { return .take }
        state = .running(upload, .streaming(paused: true))
        return .takeAndPause(send: upload.isPaused)
    }

    /// The delegate lifts its backpressure pause. Returns true when curl's pause must be
    /// updated.
    mutating func resumeReceiving(now: LoopInstant) -> Bool {
        guard case .running(let upload, .streaming(paused: true)) = state else { return false }
        state = .running(upload, .streaming(paused: false))
        idle.activity(at: now)
        return true
    }

    /// The pause to apply with curl_easy_pause now, or nil when the transfer stopped running.
    /// A read side with bytes (or the end) to take is woken: the read callback decides again
    /// whether to pause.
    mutating func pauseToApply() -> (receive: Bool, send: Bool)? {
        guard case .running(var upload, let response) = state else { return nil }
        switch upload {
        case .open(paused: true) where !queue.isEmpty:
            upload = .open(paused: false)
        case .closing(paused: true):
            upload = .closing(paused: false)
        default:
            break
        }
        state = .running(upload, response)
        return (response == .streaming(paused: true), upload.isPaused)
    }
}

extension TransferMachine.Upload {
    /// curl's read side is paused.
    var isPaused: Bool {
        switch self {
        case .open(let paused), .closing(let paused): paused
        case .done: false
        }
    }
}

/// The first-byte and idle timers, armed and fired by the glue, decided here.
extension TransferMachine {
    /// The first-byte timer fired. Returns the error to fail with, or nil when a byte came
    /// meanwhile (or the transfer is no longer running).
    mutating func firstByteTimerFired() -> UpstreamError? {
        guard case .running(_, .awaitingHead(timed: true)) = state else { return nil }
        let error = UpstreamError(.firstByteTimeout, detail: "no response within the first-byte timeout")
        _ = fail(error)
        return error
    }

    /// The idle timer fired at `now`.
    mutating func idleTimerFired(now: LoopInstant) -> IdleStep {
        guard case .running(let upload, let response) = state else { return .ignore }
        // Not counted while we hold the transfer: waiting for the client's body or for the
        // delegate to drain, or while the first-byte timeout is the one that applies.
        let waitingOnClient = upload == .open(paused: true) && queue.isEmpty
        let waitingOnUs = waitingOnClient || response == .streaming(paused: true) || response == .awaitingHead(timed: true)
        if let deadline = idle.nextDeadline(firedAt: now, heldByUs: waitingOnUs) { return .rearm(at: deadline) }
        _ = fail(IdleClock.expired)
        return .fail(IdleClock.expired)
    }
}
