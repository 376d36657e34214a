import CCurlShims
import LatchkeyHTTP
import LatchkeyLoop

/// One request/response exchange with an upstream as libcurl's full transfer, on one easy
/// handle of its client's multi: the glue that feeds curl's callbacks, the delegate's calls
/// and the timers into a `TransferMachine` and performs what it returns. Loop-confined, like
/// its client.
///
/// Lifetime: the client keeps the transfer alive until it finishes or is cancelled; the
/// transfer keeps its delegate until then. `cancel()` is final and silent: no delegate call
/// follows it.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
public final class CurlTransfer: UpstreamTransfer {
    unowned let client: UpstreamClient
    /// The handle while the transfer is in the multi; nil once released.
    @exclusivity(unchecked) private(set) var easy: CurlEasy?
    @exclusivity(unchecked) private var headers: CurlHeaderList?
    /// Nil once finished or cancelled: nothing is reported after that.
    @exclusivity(unchecked) private(set) var delegate: UpstreamTransferDelegate?
    /// Position in the client's list of active transfers.
    @exclusivity(unchecked) var activeIndex = -1

    @exclusivity(unchecked) var machine: TransferMachine
    private let firstByteTimeout: Duration
    private let idleTimeout: Duration
    private let startedAt: LoopInstant
    /// A deferred `upstreamWantsBody` or curl_easy_pause is queued on the loop: one each.
    @exclusivity(unchecked) private var wantsBodyScheduled = false
    @exclusivity(unchecked) private var pauseScheduled = false

    /// Start → finish (or cancel), for the access log.
    @exclusivity(unchecked) public private(set) var upstreamTime: Duration?
    /// Request-body bytes handed to curl.
    public var bytesSent: UInt64 { machine.bytesSent }
    /// Response-body bytes handed to the delegate.
    public var bytesReceived: UInt64 { machine.bytesReceived }
    /// Read off the handle when it is released.
    @exclusivity(unchecked) public private(set) var connectionUse = ConnectionUse()

    init(client: UpstreamClient, request: borrowing UpstreamRequest, delegate: UpstreamTransferDelegate, now: LoopInstant) {
        self.client = client
        self.delegate = delegate
        firstByteTimeout = request.options.firstByteTimeout
        idleTimeout = request.options.idleTimeout
        startedAt = now
        machine = TransferMachine(body: request.body, idleTimeout: request.options.idleTimeout, now: now)
    }

    // MARK: public

    /// Queues request-body bytes (copied) and wakes curl's read side if it was waiting.
    /// Ignored after `finishBody()`, once finished, or for a transfer without a body.
    public func sendBody(_ bytes: UnsafeRawBufferPointer) {
        if machine.bodyAvailable(bytes) { schedulePauseUpdate() }
    }

    /// End of the request body.
    public func finishBody() {
        if machine.bodyEnded() { schedulePauseUpdate() }
    }

    /// Request-body bytes queued and not yet taken by curl.
    public var queuedBodyBytes: Int { machine.queuedBodyBytes }

    /// What curl's read callback asks for at most (CURLOPT_UPLOAD_BUFFERSIZE, left at its
    /// default).
    static let curlUploadBufferSize = 64 * 1024

    /// Lifts the backpressure pause asked for by returning false from
    /// `upstreamDidReceiveBody`. curl may deliver held bytes before this returns.
    public func resumeReceiving() {
        if machine.resumeReceiving(now: LoopInstant.now()) { schedulePauseUpdate() }
    }

    /// The client went away: aborts the transfer and frees its handle (now, or right after
    /// the current curl callback returns). The delegate is released at once and hears
    /// nothing more — no `upstreamDidFinish`. The connection, if mid-response, is closed.
    public func cancel() {
        guard machine.cancel() else { return }
        delegate = nil
        upstreamTime = LoopInstant.now().since(startedAt)
        client.cancelled(self)
    }

    // MARK: lifecycle, called by the client

    func attach(easy: CurlEasy, headers: CurlHeaderList) {
        self.easy = easy
        self.headers = headers
        easy.transfer = self
        if idleTimeout > .zero { client.loop.arm(easy.idleTimer, after: idleTimeout) }
        if machine.started() { armFirstByteTimer() }
    }

    /// Takes the handle back for the client to remove from the multi and reuse. Takes the
    /// loop as an argument: it runs in the client's `deinit`, when `client` is unusable.
    func detach(loop: EventLoop) -> CurlEasy? {
        guard let easy else { return nil }
        loop.disarm(easy.firstByteTimer)
        loop.disarm(easy.idleTimer)
        connectionUse = easy.connectionUse
        easy.transfer = nil
        self.easy = nil
        headers = nil
        return easy
    }

    /// Marks the transfer finished and hands back the delegate to notify (nil if cancelled).
    @discardableResult
    func markFinished(now: LoopInstant) -> UpstreamTransferDelegate? {
        guard machine.finish() else { return nil }
        upstreamTime = now.since(startedAt)
        let delegate = self.delegate
        self.delegate = nil
        return delegate
    }

    // MARK: timers (from the loop)

    private func armFirstByteTimer() {
        guard let easy, firstByteTimeout > .zero else { return }
        client.loop.arm(easy.firstByteTimer, after: firstByteTimeout)
    }

    func firstByteTimerFired() {
        guard let error = machine.firstByteTimerFired() else { return }
        client.finish(self, error: error)
    }

    func idleTimerFired() {
        guard let easy else { return }
        switch machine.idleTimerFired(now: client.loop.now) {
        case .ignore:
            break
        case .rearm(let deadline):
            client.loop.arm(easy.idleTimer, at: deadline)
        case .fail(let error):
            client.finish(self, error: error)
        }
    }

    // MARK: pausing

    /// Applies the machine's pause state through curl_easy_pause, which may call our
    /// callbacks at once; never from inside a curl call of this client (the callbacks could
    /// re-enter), so such calls are deferred to after the current events.
    private func schedulePauseUpdate() {
        guard client.isInCurl else { return applyPause() }
        guard !pauseScheduled else { return }
        pauseScheduled = true
        client.loop.runAfterEvents { [self] in
            pauseScheduled = false
            applyPause()
        }
    }

    private func applyPause() {
        guard let easy, let pause = machine.pauseToApply() else { return }
        let result = client.pause(easy, receive: pause.receive, send: pause.send)
        if result != CURLE_OK {
            client.failLater(self, UpstreamError(curlCode: result, errorBuffer: easy.errorText))
        }
    }

    /// Asks the delegate for more request body after the current events, once per stall.
    private func scheduleWantsBody() {
        guard !wantsBodyScheduled else { return }
        wantsBodyScheduled = true
        client.loop.runAfterEvents { [self] in
            wantsBodyScheduled = false
            guard machine.wantsBody else { return }
            delegate?.upstreamWantsBody(self)
        }
    }

    // MARK: curl callbacks (inside curl: record, never re-enter the multi)

    /// CURLOPT_HEADERFUNCTION: one complete header line.
    func curlHeader(_ line: UnsafeRawBufferPointer) -> Int {
        switch machine.headerLine(line, now: client.loop.now) {
        case .take:
            return line.count
        case .takeFirst:
            if let easy { client.loop.disarm(easy.firstByteTimer) }
            return line.count
        case .deliver(let status, let fields):
            delegate?.upstreamDidReceiveHead(self, status: status, fields: fields, declared: DeclaredFraming(fields))
            return machine.isRunning ? line.count : 0
        case .refuse:
            return 0
        }
    }

    /// CURLOPT_WRITEFUNCTION: response-body bytes.
    func curlWrite(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch machine.bodyData(count: bytes.count, now: client.loop.now) {
        case .refuse:
            return 0
        case .hold:
            return Int(CURL_WRITEFUNC_PAUSE)
        case .deliver:
            break
        }
        let more = delegate?.upstreamDidReceiveBody(self, bytes) ?? true
        switch machine.delivered(more: more) {
        case .take:
            return bytes.count
        case .takeAndPause(let send):
            // Allowed from inside callbacks (curl notes the recursion); stops curl reading
            // the socket now.
            if let easy { _ = client.pause(easy, receive: true, send: send) }
            return bytes.count
        case .refuse:
            return 0
        }
    }

    /// CURLOPT_READFUNCTION: request-body bytes, or pause until `sendBody`/`finishBody`.
    func curlRead(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        switch machine.read(into: buffer, capacity: capacity, now: client.loop.now) {
        case .copied(let count, let startFirstByteTimer):
            if startFirstByteTimer { armFirstByteTimer() }
            return count
        case .end(let startFirstByteTimer):
            if startFirstByteTimer { armFirstByteTimer() }
            return 0
        case .pause:
            scheduleWantsBody()
            return Int(CURL_READFUNC_PAUSE)
        case .abort:
            return Int(CURL_READFUNC_ABORT)
        }
    }
}
