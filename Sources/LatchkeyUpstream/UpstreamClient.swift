import CCurlShims
import LatchkeyHTTP
import LatchkeyLoop

/// The upstream HTTP client of one event loop: one curl multi handle driven by the loop's
/// epoll (curl's `docs/examples/ephiperfifo.c` shape). curl's socket and timer callbacks
/// record interest in `MultiEvents`; the loop then calls `curl_multi_socket_action` and
/// drains `curl_multi_info_read`. Connections are pooled by the multi; easy handles are
/// kept configured on a free list.
///
/// Transfers take one of two paths (`UpstreamPath`): libcurl's full transfers
/// (`CurlTransfer`), or Latchkey's own HTTP/1.1 exchanges (`HTTP1Transfer`) on connections
/// curl opens in connect-only mode (`connect`) and this client's `ConnectionPool` keeps
/// alive. `activeTransfers` counts the first kind only.
///
/// Loop-confined: create, use and release it on its loop's thread.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
public final class UpstreamClient {
    public let loop: EventLoop
    private let multi: UnsafeMutableRawPointer
    let events: MultiEvents
    @exclusivity(unchecked) private var freeHandles: [CurlEasy] = []
    private let maxFreeHandles: Int
    @exclusivity(unchecked) private var active: [CurlTransfer] = []
    /// The raw connections kept alive between `HTTP1Transfer`s.
    public let pool: ConnectionPool
    /// Connect-only connections, from `connect` to `close`.
    @exclusivity(unchecked) private var connections: [ObjectIdentifier: UpstreamConnection] = [:]
    /// What curl reported done in one drain, finished after it.
    @exclusivity(unchecked) private var completed: [Completion] = []

    private enum Completion {
        case transfer(CurlTransfer, CURLcode)
        case connection(UpstreamConnection, CURLcode)
    }
    /// Depth of our calls into curl that may run its callbacks. While above zero, anything
    /// that would re-enter the multi (add, remove, pause, socket action) is deferred.
    @exclusivity(unchecked) private var curlDepth = 0

    /// - Parameters:
    ///   - maxConnections: CURLMOPT_MAXCONNECTS, the size of the multi's connection pool
    ///     (idle and busy); the oldest idle connection is closed beyond it.
    ///   - maxFreeHandles: easy handles kept for reuse when idle.
    public init(loop: EventLoop, maxConnections: Int = 256, maxFreeHandles: Int = 256) throws(UpstreamError) {
        guard let multi = curl_multi_init() else {
            throw UpstreamError(.other, detail: "curl_multi_init failed")
        }
        self.loop = loop
        self.multi = multi
        self.maxFreeHandles = maxFreeHandles
        events = MultiEvents(loop: loop)
        pool = ConnectionPool(loop: loop)
        var ok = lk_curl_multi_setopt_socketfunction(multi, multiSocketCallback) == CURLM_OK
        ok = ok && lk_curl_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, events.opaque) == CURLM_OK
        ok = ok && lk_curl_multi_setopt_timerfunction(multi, multiTimerCallback) == CURLM_OK
        ok = ok && lk_curl_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, events.opaque) == CURLM_OK
        ok = ok && lk_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxConnections) == CURLM_OK
        guard ok else {
            curl_multi_cleanup(multi)
            throw UpstreamError(.other, detail: "curl_multi_setopt failed")
        }
        events.client = self
    }

    /// Abandons active transfers silently (no delegate calls), then curl_multi_cleanup,
    /// which closes pooled connections through `MultiEvents` (still alive here).
    deinit {
        events.client = nil
        for transfer in active {
            _ = transfer.markFinished(now: LoopInstant.now())
            if let easy = transfer.detach(loop: loop) {
                curl_multi_remove_handle(multi, easy.handle)
            }
        }
        active.removeAll()
        for connection in connections.values {
            guard let easy = connection.easy else { continue }
            easy.connection = nil
            curl_multi_remove_handle(multi, easy.handle)
        }
        connections.removeAll()
        curl_multi_cleanup(multi)
        loop.disarm(events.timer)
    }

    /// Transfers started and not yet finished or cancelled.
    public var activeTransfers: Int { active.count }

    /// Starts a transfer. Failures to start are reported through `upstreamDidFinish`
    /// (deferred), never thrown. May be called from inside delegate callbacks.
    public func start(_ request: borrowing UpstreamRequest, delegate: UpstreamTransferDelegate) -> CurlTransfer {
        let transfer = CurlTransfer(client: self, request: request, delegate: delegate, now: LoopInstant.now())
        transfer.activeIndex = active.count
        active.append(transfer)
        guard let easy = freeHandles.popLast() ?? CurlEasy(events: events) else {
            failLater(transfer, UpstreamError(.other, detail: "curl_easy_init failed"))
            return transfer
        }
        let (fields, cookie) = request.cookieJar == nil ? (request.fields, nil) : request.cookiesForJar
        let headers = CurlHeaderList(fields)
        var code = easy.prepare(options: request.options)
        if code == CURLE_OK {
            code = easy.configure(request: request, headers: headers, cookie: cookie, transfer: Unmanaged.passUnretained(transfer).toOpaque())
        }
        transfer.attach(easy: easy, headers: headers)
        guard code == CURLE_OK else {
            failLater(transfer, UpstreamError(curlCode: code, errorBuffer: nil))
            return transfer
        }
        if isInCurl {
            // curl_multi_add_handle is refused from inside curl's callbacks.
            loop.runAfterEvents { [self] in add(transfer) }
        } else {
            add(transfer)
        }
        return transfer
    }

    /// Starts a transfer on `path`: libcurl's (`start(_:delegate:)`), or Latchkey's own
    /// HTTP/1.1 exchange over a pooled connection. Failures to start are reported through
    /// `upstreamDidFinish` (deferred), never thrown.
    public func start(_ request: borrowing UpstreamRequest, on path: UpstreamPath, delegate: UpstreamTransferDelegate) -> UpstreamTransfer {
        guard path == .http1, let transfer = HTTP1Transfer(client: self, request: request, delegate: delegate) else {
            return start(request, delegate: delegate)
        }
        transfer.start()
        return transfer
    }

    /// Opens a connection to `url`'s host and port (with TLS for https, through the
    /// options' proxy) and hands it over as a raw byte stream: the delegate hears once,
    /// after the current events at the earliest. The caller closes the connection (which
    /// also cancels it while it is being made).
    public func connect(to url: String, options: UpstreamOptions, delegate: UpstreamConnectionDelegate) -> UpstreamConnection? {
        guard let easy = CurlEasy(events: events) else { return nil }
        let connection = UpstreamConnection(client: self, easy: easy, delegate: delegate, overTLS: url.lowercased().hasPrefix("https:"),
                                            proxyOverTLS: options.proxy?.lowercased().hasPrefix("https:") == true)
        easy.connection = connection
        connections[ObjectIdentifier(connection)] = connection
        var status = CurlStatus()
        status.check(easy.prepare(options: options))
        status.check(lk_curl_easy_setopt_long(easy.handle, CURLOPT_CONNECT_ONLY, 1))
        // curl's receive buffer, for the connect only: see `UpstreamConnection`.
        if connection.readsSocketItself { status.check(lk_curl_easy_setopt_long(easy.handle, CURLOPT_BUFFERSIZE, 1024)) }
        // Through an HTTP proxy, a plain http:// destination is reached by a CONNECT tunnel
        // too: the bytes after it are the caller's, not requests for the proxy.
        if options.proxy != nil { status.check(lk_curl_easy_setopt_long(easy.handle, CURLOPT_HTTPPROXYTUNNEL, 1)) }
        status.check(lk_curl_easy_setopt_string(easy.handle, CURLOPT_URL, url))
        if status.code == CURLE_OK {
            curlDepth += 1
            let added = curl_multi_add_handle(multi, easy.handle)
            curlDepth -= 1
            if added == CURLM_OK { return connection }
        }
        let error = UpstreamError(curlCode: status.code == CURLE_OK ? CURLE_FAILED_INIT : status.code, errorBuffer: nil)
        loop.runAfterEvents { connection.connectFinished(error: error) }
        return connection
    }

    /// The connection is closed: its handle leaves the multi, which closes the socket.
    func release(connection: UpstreamConnection, easy: CurlEasy) {
        connections[ObjectIdentifier(connection)] = nil
        easy.connection = nil
        if isInCurl {
            loop.runAfterEvents { [self] in removeConnectionHandle(easy) }
        } else {
            removeConnectionHandle(easy)
        }
    }

    private func removeConnectionHandle(_ easy: CurlEasy) {
        curlDepth += 1
        curl_multi_remove_handle(multi, easy.handle)
        curlDepth -= 1
    }

    private func add(_ transfer: CurlTransfer) {
        guard transfer.machine.isRunning, let easy = transfer.easy else { return }
        curlDepth += 1
        let result = curl_multi_add_handle(multi, easy.handle)
        curlDepth -= 1
        if result != CURLM_OK {
            failLater(transfer, UpstreamError(.other, detail: String(cString: curl_multi_strerror(result))))
        }
    }

    // MARK: driving curl (from the loop)

    var isInCurl: Bool { curlDepth > 0 }

    /// curl_multi_socket_action for one socket (or CURL_SOCKET_TIMEOUT), then finishes what
    /// completed.
    func socketAction(_ fd: Int32, events mask: Int32) {
        assert(!isInCurl, "curl_multi_socket_action re-entered")
        var running: Int32 = 0
        curlDepth += 1
        _ = curl_multi_socket_action(multi, fd, mask, &running)
        curlDepth -= 1
        drainCompleted()
    }

    /// curl_multi_info_read until empty; the transfers are finished after the loop, since
    /// removing a handle invalidates curl's message.
    private func drainCompleted() {
        var pending: Int32 = 0
        while let message = curl_multi_info_read(multi, &pending) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var context: UnsafeMutableRawPointer?
            guard lk_curl_easy_getinfo_ptr(handle, CURLINFO_PRIVATE, &context) == CURLE_OK, let context else { continue }
            // What the handle carries now: finishing one of the batch may cancel another,
            // whose handle a new transfer may then take.
            let easy = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue()
            if let transfer = easy.transfer {
                completed.append(.transfer(transfer, code))
            } else if let connection = easy.connection {
                completed.append(.connection(connection, code))
            }
        }
        guard !completed.isEmpty else { return }
        var batch = completed
        completed = []
        for done in batch {
            switch done {
            case .transfer(let transfer, let code):
                let curlError = code == CURLE_OK ? nil : transfer.easy?.error(for: code) ?? UpstreamError(curlCode: code, errorBuffer: nil)
                finish(transfer, error: transfer.machine.outcome(curlError: curlError))
            case .connection(let connection, let code):
                connection.connectFinished(error: code == CURLE_OK ? nil : connection.easy?.error(for: code))
            }
        }
        batch.removeAll(keepingCapacity: true)
        completed = batch
    }

    /// curl_easy_pause with both directions' state (the bitmask sets both).
    func pause(_ easy: CurlEasy, receive: Bool, send: Bool) -> CURLcode {
        var mask: Int32 = 0
        if receive { mask |= CURLPAUSE_RECV }
        if send { mask |= CURLPAUSE_SEND }
        curlDepth += 1
        defer { curlDepth -= 1 }
        return curl_easy_pause(easy.handle, mask)
    }

    // MARK: finishing

    /// Removes the transfer from the multi and reports `error` (nil: complete) to its
    /// delegate, if it has not finished yet; after the current events when called inside curl.
    func finish(_ transfer: CurlTransfer, error: UpstreamError?) {
        if isInCurl {
            loop.runAfterEvents { [self] in finish(transfer, error: error) }
            return
        }
        release(transfer)
        transfer.markFinished(now: LoopInstant.now())?.upstreamDidFinish(transfer, error: error)
    }

    /// Fails now (the callbacks refuse further data) and finishes after the current events;
    /// nothing if the transfer is failing or over already.
    func failLater(_ transfer: CurlTransfer, _ error: UpstreamError) {
        guard transfer.machine.fail(error) else { return }
        loop.runAfterEvents { [self] in finish(transfer, error: error) }
    }

    /// The transfer was cancelled and is already marked finished: free its handle.
    func cancelled(_ transfer: CurlTransfer) {
        if isInCurl {
            loop.runAfterEvents { [self] in release(transfer) }
        } else {
            release(transfer)
        }
    }

    /// curl_multi_remove_handle (never inside a callback), then the handle goes back to the
    /// free list and the transfer leaves the active list.
    private func release(_ transfer: CurlTransfer) {
        precondition(!isInCurl, "curl_multi_remove_handle inside a curl callback")
        if let easy = transfer.detach(loop: loop) {
            curlDepth += 1
            curl_multi_remove_handle(multi, easy.handle)
            curlDepth -= 1
            if freeHandles.count < maxFreeHandles, easy.cookieJar == nil { freeHandles.append(easy) }
        }
        let index = transfer.activeIndex
        guard index >= 0, index < active.count, active[index] === transfer else { return }
        let last = active.count - 1
        if index != last {
            active.swapAt(index, last)
            active[index].activeIndex = index
        }
        active.removeLast()
        transfer.activeIndex = -1
    }
}
