import CLinux
import LatchkeyHTTP
import LatchkeyLoop
#if canImport(Glibc)
import Glibc
#endif

/// The serving loop of `LoopbackRedirectReceiver`, run on its thread: poll(2) over the
/// listener, the wake-up eventfd and the open connections, so that a browser's idle
/// preconnection never holds up the request that matters. Each connection carries one
/// request, decoded by the project's own codec, and is closed after the answer.
struct RedirectServer {
    let listener: Int32
    let wake: Int32
    let port: UInt16
    let path: String
    let request: AuthorizationRequest
    let timeout: Duration
    let ignored: @Sendable (String) -> Void
    private let deadline: ContinuousClock.Instant
    private var connections: [RedirectConnection] = []

    /// More would only be a page hammering the port; the oldest stay.
    static let maxConnections = 16

    init(
        listener: Int32, wake: Int32, port: UInt16, path: String, request: AuthorizationRequest,
        timeout: Duration, ignored: @escaping @Sendable (String) -> Void
    ) {
        self.listener = listener
        self.wake = wake
        self.port = port
        self.path = path
        self.request = request
        self.timeout = timeout
        self.ignored = ignored
        deadline = .now + timeout
    }

    mutating func run() -> Result<String, LoginError> {
        defer { for connection in connections { close(connection.fd) } }
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else { return .failure(.timedOut(timeout)) }
            var descriptors = [wake, listener].map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            descriptors += connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            do {
                _ = try systemCall("poll") { poll(&descriptors, nfds_t(descriptors.count), Self.milliseconds(remaining)) }
            } catch {
                return .failure(.cannotListen(port: port, error))
            }
            if descriptors[0].revents != 0 { return .failure(.cancelled) }
            // From the last, so that removing one keeps the others' indices.
            for index in connections.indices.reversed() where descriptors[index + 2].revents != 0 {
                if let outcome = serve(index) { return outcome }
            }
            if descriptors[1].revents != 0 { accept() }
        }
    }

    /// Reads what connection `index` has and answers a complete request; the login's
    /// outcome when that request ends it.
    private mutating func serve(_ index: Int) -> Result<String, LoginError>? {
        let page: RedirectPage
        var outcome: Result<String, LoginError>?
        switch connections[index].receive() {
        case .waiting:
            return nil
        case .closed:
            close(connections.remove(at: index).fd)
            return nil
        case .malformed(let error):
            page = .badRequest(error)
        case .head(let head):
            switch RedirectVerdict(head, path: path, request: request) {
            case .ignore(let answer, let notice):
                page = answer
                if let notice { ignored(notice) }
            case .finish(let answer, let result):
                page = answer
                outcome = result
            }
        }
        let connection = connections.remove(at: index)
        connection.send(page.response)
        close(connection.fd)
        return outcome
    }

    /// accept4(2), close-on-exec; beyond `maxConnections` the newcomer is closed at once.
    private mutating func accept() {
        guard let fd = try? systemCall("accept4", { lk_accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue)) }) else { return }
        guard connections.count < Self.maxConnections else {
            close(fd)
            return
        }
        connections.append(RedirectConnection(fd: fd))
    }

    /// poll(2)'s timeout: whole milliseconds, rounded up so that the deadline has passed
    /// when it returns.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let total = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: total)
    }
}

/// What one request to the loopback listener means for the login.
enum RedirectVerdict: Equatable {
    /// Not the login's redirect: answer the page and go on waiting. `notice` says what
    /// was ignored when the user should hear of it.
    case ignore(RedirectPage, notice: String?)
    /// The login's redirect: answer the page, then end with `result`.
    case finish(RedirectPage, Result<String, LoginError>)

    init(_ head: RequestHead, path: String, request: AuthorizationRequest) {
        let target = head.target
        guard target.prefix(while: { $0 != "?" }) == path else {
            self = .ignore(.notFound, notice: nil)
            return
        }
        guard head.method == "GET" else {
            self = .ignore(.methodNotAllowed, notice: nil)
            return
        }
        do {
            self = .finish(.loggedIn, .success(try request.code(fromRedirect: target)))
        } catch {
            let failure: LoginError
            switch error {
            case .stateMismatch:
                self = .ignore(.notThisLogin, notice: "ignored a request to the redirect URI whose state does not match this login")
                return
            case .refused(let code, let description):
                failure = .refused(error: code, description: description)
            case .missingCode:
                failure = .missingCode
            }
            self = .finish(.failed(failure), .failure(failure))
        }
    }
}

/// One accepted connection: its bytes so far and the request decoder.
private struct RedirectConnection {
    enum Event {
        case waiting
        case closed
        case head(RequestHead)
        case malformed(HTTPParseError)
    }

    let fd: Int32
    private var buffer: [UInt8] = []
    private var decoder = RequestDecoder()

    init(fd: Int32) {
        self.fd = fd
    }

    /// recv(2) once (poll said there is something, so it does not block), then decodes.
    mutating func receive() -> Event {
        var chunk = [UInt8](repeating: 0, count: 8192)
        let count = (try? systemCall("recv") { chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }) ?? 0
        guard count > 0 else { return .closed }
        buffer += chunk[..<count]
        while true {
            let step = buffer.withUnsafeBytes { decoder.decode($0) }
            buffer.removeFirst(step.consumed)
            switch step.event {
            case .needMore: return .waiting
            case .head(let head): return .head(head)
            case .error(let error): return .malformed(error)
            case .body, .end: continue
            }
        }
    }

    /// send(2) with MSG_NOSIGNAL until all is written or the peer is gone.
    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = (try? systemCall("send") {
                bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }) ?? 0
            guard sent > 0 else { return }
            offset += sent
        }
    }
}
