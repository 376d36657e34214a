import CCurlShims
import LatchkeyHTTP
import LatchkeyLoop

/// One request/response exchange with an upstream, on one easy handle of its client's
/// multi. Loop-confined, like its client.
///
/// Lifetime: the client keeps the transfer alive until it finishes or is cancelled; the
/// transfer keeps its delegate until then. `cancel()` is final and silent: no delegate call
/// follows it.
public final class UpstreamTransfer {
    unowned let client: UpstreamClient
    /// The handle while the transfer is in the multi; nil once released.
    private(set) var easy: CurlEasy?
    private var headers: CurlHeaderList?
    /// Nil once finished or cancelled: nothing is reported after that.
    private(set) var delegate: UpstreamTransferDelegate?
    /// Position in the client's list of active transfers.
    var activeIndex = -1

    let body: UpstreamBody
    private let firstByteTimeout: Duration
    private let idleTimeout: Duration
    private let startedAt: LoopInstant
    private var lastActivity: LoopInstant

    private var parser = ResponseHeadParser()
    private var queue = ByteQueue()
    /// Request-body bytes curl may still take (`.length`), or UInt64.max.
    private var bodyRemaining: UInt64
    private var bodyFinished: Bool
    private var sentEndOfBody = false

    /// curl's read side is paused because the read callback returned CURL_READFUNC_PAUSE.
    private var sendPaused = false
    /// The delegate asked for no more body bytes (backpressure): curl's receive side is paused.
    private var receivePaused = false
    private var wantsBodyScheduled = false
    private var resumeScheduled = false
    private var headReceived = false
    private var awaitingFirstByte = false
    /// True from `cancel()` or a failure decided by us on: curl's callbacks abort the transfer.
    private(set) var aborted = false
    /// The failure decided by us (a timeout, a failed start), reported instead of curl's code.
    private(set) var abortError: UpstreamError?
    private(set) var finished = false

    /// Start → finish (or cancel), for the access log.
    public private(set) var upstreamTime: Duration?
    /// Request-body bytes handed to curl.
    public private(set) var bytesSent: UInt64 = 0
    /// Response-body bytes handed to the delegate.
    public private(set) var bytesReceived: UInt64 = 0

    init(client: UpstreamClient, request: UpstreamRequest, delegate: UpstreamTransferDelegate, now: LoopInstant) {
        self.client = client
        self.delegate = delegate
        body = request.body
        firstByteTimeout = request.options.firstByteTimeout
        idleTimeout = request.options.idleTimeout
        startedAt = now
        lastActivity = now
        switch request.body {
        case .none:
            bodyRemaining = 0
            bodyFinished = true
        case .length(let length):
            bodyRemaining = length
            bodyFinished = length == 0
        case .streaming:
            bodyRemaining = .max
            bodyFinished = false
        }
    }

    // MARK: public

    /// Queues request-body bytes (copied) and wakes curl's read side if it was waiting.
    /// Ignored after `finishBody()`, once finished, or for a transfer without a body.
    public func sendBody(_ bytes: UnsafeRawBufferPointer) {
        guard !finished, !aborted, !bodyFinished, bytes.count > 0 else { return }
        queue.append(bytes)
        if sendPaused { scheduleResume() }
    }

    /// End of the request body.
    public func finishBody() {
        guard !finished, !aborted, !bodyFinished else { return }
        bodyFinished = true
        if sendPaused { scheduleResume() }
    }

    /// Request-body bytes queued and not yet taken by curl. Stop reading the client above a
    /// high-water mark (e.g. 256 KiB); `upstreamWantsBody` says when to read again.
    public var queuedBodyBytes: Int { queue.count }

    /// Lifts the backpressure pause asked for by returning false from
    /// `upstreamDidReceiveBody`. curl may deliver held bytes before this returns.
    public func resumeReceiving() {
        guard !finished, !aborted, receivePaused else { return }
        receivePaused = false
        lastActivity = LoopInstant.now()
        scheduleResume()
    }

    /// The client went away: aborts the transfer and frees its handle (now, or right after
    /// the current curl callback returns). The delegate is released at once and hears
    /// nothing more — no `upstreamDidFinish`. The connection, if mid-response, is closed.
    public func cancel() {
        guard !finished else { return }
        aborted = true
        finished = true
        delegate = nil
        upstreamTime = LoopInstant.now().since(startedAt)
        queue.removeAll()
        client.cancelled(self)
    }

    // MARK: lifecycle, called by the client

    func attach(easy: CurlEasy, headers: CurlHeaderList) {
        self.easy = easy
        self.headers = headers
        easy.transfer = self
        if idleTimeout > .zero { client.loop.arm(easy.idleTimer, after: idleTimeout) }
        if bodyFinished { startFirstByteTimer() }
    }

    func abort(with error: UpstreamError) {
        aborted = true
        if abortError == nil { abortError = error }
    }

    /// Takes the handle back for the client to remove from the multi and reuse. Takes the
    /// loop as an argument: it runs in the client's `deinit`, when `client` is unusable.
    func detach(loop: EventLoop) -> CurlEasy? {
        guard let easy else { return nil }
        loop.disarm(easy.firstByteTimer)
        loop.disarm(easy.idleTimer)
        easy.transfer = nil
        self.easy = nil
        headers = nil
        return easy
    }

    /// Marks the transfer finished and hands back the delegate to notify (nil if cancelled).
    @discardableResult
    func markFinished(now: LoopInstant) -> UpstreamTransferDelegate? {
        guard !finished else { return nil }
        finished = true
        upstreamTime = now.since(startedAt)
        queue.removeAll()
        let delegate = self.delegate
        self.delegate = nil
        return delegate
    }

    /// The error for a transfer curl finished with `code`.
    func error(forCurlCode code: CURLcode) -> UpstreamError? {
        if code == CURLE_OK {
            return headReceived ? nil : UpstreamError(.receiveFailed, detail: "no response head")
        }
        return UpstreamError(curlCode: code, errorBuffer: easy?.errorText)
    }

    // MARK: timers (from the loop)

    private func startFirstByteTimer() {
        guard !headReceived, let easy else { return }
        awaitingFirstByte = true
        if firstByteTimeout > .zero { client.loop.arm(easy.firstByteTimer, after: firstByteTimeout) }
    }

    func firstByteTimerFired() {
        guard awaitingFirstByte, !finished else { return }
        client.fail(self, UpstreamError(.firstByteTimeout, detail: "no response within the first-byte timeout"))
    }

    func idleTimerFired() {
        guard let easy, !finished else { return }
        let now = client.loop.now
        // Not counted while we hold the transfer: waiting for the client's body or for the
        // delegate to drain, or while the first-byte timeout is the one that applies.
        let waitingOnUs = receivePaused || (sendPaused && queue.isEmpty && !bodyFinished)
        if waitingOnUs || awaitingFirstByte {
            lastActivity = now
            client.loop.arm(easy.idleTimer, after: idleTimeout)
            return
        }
        let deadline = lastActivity.advanced(by: idleTimeout)
        if deadline > now {
            client.loop.arm(easy.idleTimer, at: deadline)
            return
        }
        client.fail(self, UpstreamError(.idleTimeout, detail: "upstream idle for longer than the idle timeout"))
    }

    // MARK: pausing

    /// Applies the pause flags through curl_easy_pause, which may call our callbacks at once;
    /// never from inside a curl call of this client (the callbacks could re-enter), so
    /// such calls are deferred to after the current events.
    private func scheduleResume() {
        if client.isInCurl {
            guard !resumeScheduled else { return }
            resumeScheduled = true
            client.loop.runAfterEvents { [self] in
                resumeScheduled = false
                applyPauseState()
            }
        } else {
            applyPauseState()
        }
    }

    private func applyPauseState() {
        guard let easy, !finished, !aborted else { return }
        // Waking the read side: the read callback decides again whether to pause.
        if sendPaused && (!queue.isEmpty || bodyFinished) { sendPaused = false }
        let result = client.pause(easy, receive: receivePaused, send: sendPaused)
        if result != CURLE_OK && !finished {
            client.failLater(self, UpstreamError(curlCode: result, errorBuffer: easy.errorText))
        }
    }

    // MARK: curl callbacks (inside curl: record, never re-enter the multi)

    /// CURLOPT_HEADERFUNCTION: one complete header line.
    func curlHeader(_ line: UnsafeRawBufferPointer) -> Int {
        if aborted { return 0 }
        lastActivity = client.loop.now
        if awaitingFirstByte {
            awaitingFirstByte = false
            if let easy { client.loop.disarm(easy.firstByteTimer) }
        }
        switch parser.consume(line) {
        case .needMore, .interim, .ignored:
            return line.count
        case .invalid:
            // Returning less than the line aborts with CURLE_WRITE_ERROR; report why instead.
            abort(with: UpstreamError(.other, detail: "malformed response head line"))
            return 0
        case .head(let status, let fields):
            headReceived = true
            delegate?.upstreamDidReceiveHead(self, status: status, fields: fields)
            return aborted ? 0 : line.count
        }
    }

    /// CURLOPT_WRITEFUNCTION: response-body bytes.
    func curlWrite(_ bytes: UnsafeRawBufferPointer) -> Int {
        if aborted { return 0 }
        // Paused by us from inside an earlier call in the same curl write loop: curl keeps
        // these bytes (none consumed) and delivers them again after the resume.
        if receivePaused { return Int(CURL_WRITEFUNC_PAUSE) }
        lastActivity = client.loop.now
        bytesReceived &+= UInt64(bytes.count)
        let more = delegate?.upstreamDidReceiveBody(self, bytes) ?? true
        if aborted { return 0 }
        if !more {
            receivePaused = true
            // curl_easy_pause is allowed from inside callbacks (it notes the recursion);
            // pausing now stops curl reading the socket. Keep SEND's state as it is: the
            // bitmask sets both directions.
            if let easy { _ = client.pause(easy, receive: true, send: sendPaused) }
        }
        return bytes.count
    }

    /// CURLOPT_READFUNCTION: request-body bytes, or pause until `sendBody`/`finishBody`.
    func curlRead(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        if aborted { return Int(CURL_READFUNC_ABORT) }
        if !queue.isEmpty, bodyRemaining > 0 {
            let limit = UInt64(capacity) < bodyRemaining ? capacity : Int(bodyRemaining)
            let n = queue.read(into: buffer, capacity: limit)
            bytesSent &+= UInt64(n)
            if bodyRemaining != .max { bodyRemaining -= UInt64(n) }
            lastActivity = client.loop.now
            return n
        }
        if bodyFinished || bodyRemaining == 0 {
            if !sentEndOfBody {
                sentEndOfBody = true
                startFirstByteTimer()
            }
            return 0
        }
        sendPaused = true
        if !wantsBodyScheduled {
            wantsBodyScheduled = true
            client.loop.runAfterEvents { [self] in
                wantsBodyScheduled = false
                guard !finished, !aborted, sendPaused, queue.isEmpty, !bodyFinished else { return }
                delegate?.upstreamWantsBody(self)
            }
        }
        return Int(CURL_READFUNC_PAUSE)
    }
}

// MARK: C callbacks: capture-free, the transfer through CURLOPT_HEADERDATA/WRITEDATA/READDATA

let transferHeaderCallback: curl_write_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.curlHeader(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

let transferWriteCallback: curl_write_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.curlWrite(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

let transferReadCallback: curl_read_callback = { buffer, size, count, userdata in
    let transfer = Unmanaged<UpstreamTransfer>.fromOpaque(userdata!).takeUnretainedValue()
    return transfer.curlRead(into: UnsafeMutableRawPointer(buffer!), capacity: size * count)
}
