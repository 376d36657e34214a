import CCurlShims
import LatchkeyHTTP
import LatchkeyLoop

/// Owns one easy handle (curl_easy_cleanup in `deinit`) and what is reused with it from
/// request to request on one client: the error buffer, the transfer's two timers (made at
/// the first transfer: a connect-only connection's handle never has any), and the options
/// that stay the same. Free handles wait on the client's free list.
final class CurlEasy {
    let handle: UnsafeMutableRawPointer
    /// CURLOPT_ERRORBUFFER: CURL_ERROR_SIZE bytes, cleared before each request.
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// The transfer on this handle while it is in the multi; nil on the free list.
    var transfer: CurlTransfer?
    /// Or the connect-only connection on it, which keeps the handle for its whole life.
    /// The client holds the connection for exactly as long as this is set (`release`
    /// clears both). Not `weak`: a weak reference gives the connection a side table, which
    /// sent each of its retains and releases, several per request, down the slow path.
    unowned(unsafe) var connection: UpstreamConnection?
    /// The multi's socket bookkeeping, which opens this handle's sockets.
    unowned let events: MultiEvents
    /// The address the destination guard refused in this transfer, for its error; nil
    /// when none was.
    private(set) var refusedDestination: (kind: String, address: String)?
    private(set) lazy var firstByteTimer: LoopTimer = ClosureTimer { [unowned self] in self.transfer?.firstByteTimerFired() }
    private(set) lazy var idleTimer: LoopTimer = ClosureTimer { [unowned self] in self.transfer?.idleTimerFired() }
    /// The options the handle is configured with; nil before the first request.
    private var configuredOptions: UpstreamOptions?
    /// The jar the handle's cookie engine was turned on for. Such a handle is never reused:
    /// curl cannot turn the engine off again, and cookies must not follow the handle to
    /// another request. Held so that the jar outlives the handle.
    private(set) var cookieJar: CookieJar?

    init?(events: MultiEvents) {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        self.events = events
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Everything but the request itself. A handle whose options are unchanged keeps its
    /// configuration; otherwise curl_easy_reset and configure from scratch (restoring curl's
    /// defaults, e.g. the system CA bundle, is what reset does and setting NULL does not).
    func prepare(options: UpstreamOptions) -> CURLcode {
        errorBuffer[0] = 0
        refusedDestination = nil
        if let configuredOptions, configuredOptions == options { return CURLE_OK }
        if configuredOptions != nil { curl_easy_reset(handle) }
        configuredOptions = nil
        var status = CurlStatus()
        // Fixed for every request.
        status.check(lk_curl_easy_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        // This object: the transfer or connection it carries, found by `curl_multi_info_read`.
        status.check(lk_curl_easy_setopt_ptr(handle, CURLOPT_PRIVATE, opaque))
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_TCP_NODELAY, 1))
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1))
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        // Raw bytes pass through: no Content-Encoding decoding (chunked is still removed).
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_HTTP_CONTENT_DECODING, 0))
        // A proxy forwards the path as the client sent it: no dot-segment squashing.
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_PATH_AS_IS, 1))
        // The CONNECT response of an HTTP proxy tunnel is not the upstream's head.
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1))
        status.check(lk_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        status.check(lk_curl_easy_setopt_header(handle, transferHeaderCallback))
        status.check(lk_curl_easy_setopt_write(handle, transferWriteCallback))
        status.check(lk_curl_easy_setopt_read(handle, transferReadCallback))
        status.check(lk_curl_easy_setopt_opensocket(handle, openSocketCallback))
        status.check(lk_curl_easy_setopt_ptr(handle, CURLOPT_OPENSOCKETDATA, opaque))
        status.check(lk_curl_easy_setopt_closesocket(handle, closeSocketCallback))
        status.check(lk_curl_easy_setopt_ptr(handle, CURLOPT_CLOSESOCKETDATA, events.opaque))
        // Per route.
        let version = options.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, version))
        if let caFile = options.caFile {
            status.check(lk_curl_easy_setopt_string(handle, CURLOPT_CAINFO, caFile))
        }
        if let certificate = options.clientCertificateFile {
            status.check(lk_curl_easy_setopt_string(handle, CURLOPT_SSLCERT, certificate))
        }
        if let key = options.clientKeyFile {
            status.check(lk_curl_easy_setopt_string(handle, CURLOPT_SSLKEY, key))
        }
        if let proxy = options.proxy {
            status.check(lk_curl_easy_setopt_string(handle, CURLOPT_PROXY, proxy))
        }
        let connectMilliseconds = Int(clamping: options.connectTimeout.nanosecondsClamped / 1_000_000)
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectMilliseconds))
        if status.code == CURLE_OK { configuredOptions = options }
        return status.code
    }

    /// The request itself: URL, headers, method and body framing, and the transfer as the
    /// context of every callback.
    func configure(request: borrowing UpstreamRequest, headers: CurlHeaderList, cookie: String?, transfer: UnsafeMutableRawPointer) -> CURLcode {
        var status = CurlStatus()
        if let jar = request.cookieJar {
            cookieJar = jar
            status.check(CookieJar.attach(handle, to: jar))
            status.check(lk_curl_easy_setopt_string(handle, CURLOPT_COOKIE, cookie))
        }
        status.check(lk_curl_easy_setopt_string(handle, CURLOPT_URL, request.url))
        status.check(lk_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headers.list))
        status.check(lk_curl_easy_setopt_ptr(handle, CURLOPT_HEADERDATA, transfer))
        status.check(lk_curl_easy_setopt_ptr(handle, CURLOPT_WRITEDATA, transfer))
        status.check(lk_curl_easy_setopt_ptr(handle, CURLOPT_READDATA, transfer))
        // Back to a plain GET first: NOBODY and UPLOAD each change curl's method.
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_NOBODY, 0))
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_UPLOAD, 0))
        status.check(lk_curl_easy_setopt_long(handle, CURLOPT_HTTPGET, 1))
        if request.method == "HEAD" {
            // NOBODY, not CUSTOMREQUEST: curl must not wait for a body the head announces.
            status.check(lk_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, nil))
            status.check(lk_curl_easy_setopt_long(handle, CURLOPT_NOBODY, 1))
        } else if request.method == "GET" && request.body == .none {
            status.check(lk_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, nil))
        } else {
            // With UPLOAD curl would say PUT: the method always comes from CUSTOMREQUEST.
            status.check(lk_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method))
        }
        switch request.body {
        case .none:
            status.check(lk_curl_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, -1))
        case .length(let length):
            status.check(lk_curl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1))
            status.check(lk_curl_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(clamping: length)))
        case .streaming:
            // Unknown size: curl frames HTTP/1.1 uploads with Transfer-Encoding: chunked.
            status.check(lk_curl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1))
            status.check(lk_curl_easy_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, -1))
        }
        return status.code
    }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// CURLOPT_OPENSOCKETFUNCTION for this handle: the destination guard of the options it
    /// is configured with, then the socket. A refused address makes curl try the next one
    /// and fail with CURLE_COULDNT_CONNECT when none is left; the refusal is kept for the
    /// error.
    func openSocket(_ address: UnsafePointer<curl_sockaddr>) -> curl_socket_t {
        if configuredOptions?.refusesLocalDestinations == true {
            let refusal = withUnsafePointer(to: address.pointee.addr) { DestinationGuard.refusal($0) }
            if let refusal {
                refusedDestination = refusal
                return CURL_SOCKET_BAD
            }
        }
        return events.openSocket(family: address.pointee.family, type: address.pointee.socktype, protocol: address.pointee.protocol)
    }

    /// The error for a finished transfer's `code`: the guard's refusal when it refused
    /// every address curl tried.
    func error(for code: CURLcode) -> UpstreamError {
        if code == CURLE_COULDNT_CONNECT, let refusedDestination {
            return UpstreamError(.destinationRefused,
                                 detail: "the destination resolves to \(refusedDestination.address), a \(refusedDestination.kind) address")
        }
        return UpstreamError(curlCode: code, errorBuffer: errorText)
    }

    /// The connections the last transfer on the handle went on: CURLINFO_NUM_CONNECTS
    /// counts the ones it opened; none opened and a request sent means one kept alive.
    var connectionUse: ConnectionUse {
        var opened = 0
        var requestSize = 0
        _ = lk_curl_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &opened)
        _ = lk_curl_easy_getinfo_long(handle, CURLINFO_REQUEST_SIZE, &requestSize)
        return ConnectionUse(opened: opened, reused: opened == 0 && requestSize > 0)
    }

    /// The transfer's error text (CURLOPT_ERRORBUFFER) if curl wrote one.
    var errorText: UnsafePointer<CChar>? {
        errorBuffer[0] == 0 ? nil : UnsafePointer(errorBuffer)
    }
}

/// Keeps the first failing CURLcode of a series of setopt calls.
struct CurlStatus {
    private(set) var code = CURLE_OK

    mutating func check(_ result: CURLcode) {
        if code == CURLE_OK { code = result }
    }
}
