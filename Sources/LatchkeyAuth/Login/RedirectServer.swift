import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyServer

/// The serving side of `LoopbackRedirectReceiver`, on its event loop: an `HTTPServer` on
/// the loopback listener whose every request is answered here with a `RedirectPage`, on a
/// connection that closes after it. A browser's idle preconnection never holds up the
/// request that matters. The login ends when its redirect has come, the timeout has passed
/// or it was cancelled (`end`, from the receiver through the loop's handle).
final class RedirectServer: ServerHandler, ExchangeHandler {
    private let loop: EventLoop
    private let listener: ListeningSocket
    private let path: String
    private let request: AuthorizationRequest
    private let timeout: Duration
    private let ignored: @Sendable (String) -> Void
    /// Told the outcome once, on the loop, when the listener is closed and the answers
    /// under way are written.
    private let finished: @Sendable (Result<String, LoginError>) -> Void
    /// The loop holds the server (attached); the server holds this, its handler.
    private weak var server: HTTPServer?
    private var outcome: Result<String, LoginError>?
    private lazy var deadline = ClosureTimer { [unowned self] in end(.failure(.timedOut(timeout))) }
    /// An answer the browser does not read must not keep the login from ending.
    private lazy var grace = ClosureTimer { [unowned self] in server?.closeAll() }

    /// More connections would only be a page hammering the port (503 beyond); one request
    /// each, as a browser needs nothing more of this port.
    static let settings = ConnectionSettings(maxConnections: 16, keepAlive: false)

    init(
        loop: EventLoop, listener: ListeningSocket, path: String, request: AuthorizationRequest, timeout: Duration,
        ignored: @escaping @Sendable (String) -> Void, finished: @escaping @Sendable (Result<String, LoginError>) -> Void
    ) {
        self.loop = loop
        self.listener = listener
        self.path = path
        self.request = request
        self.timeout = timeout
        self.ignored = ignored
        self.finished = finished
    }

    /// Starts serving on `loop` and the timeout's clock.
    func start() throws(SystemError) {
        let server = HTTPServer(loop: loop, settings: Self.settings, handler: self)
        try server.listen(on: listener)
        loop.attach(server)
        loop.attach(self)
        self.server = server
        loop.arm(deadline, after: timeout)
    }

    func handle(_ exchange: ServerExchange) -> ExchangeHandler {
        let page: RedirectPage
        switch RedirectVerdict(exchange.head, path: path, request: request) {
        case .ignore(let answer, let notice):
            page = answer
            if let notice { ignored(notice) }
        case .finish(let answer, let result):
            page = answer
            end(result)
        }
        exchange.respond(status: page.status, fields: page.fields, body: page.body)
        return self
    }

    /// The login is over: the listener closes at once, the answers under way are written
    /// (for a second at most), then the loop stops and `finished` is told.
    func end(_ result: Result<String, LoginError>) {
        guard outcome == nil, let server else { return }
        outcome = result
        loop.disarm(deadline)
        server.stopAccepting()
        listener.close()
        loop.arm(grace, after: .seconds(1))
        // After this turn's events, so that an answer given in `handle` is queued first.
        loop.runAfterEvents { [self] in
            server.drain { [self] in
                loop.disarm(grace)
                loop.stop()
                finished(result)
            }
        }
    }

    // Every request is answered from its head: a body is not read, and nothing else is
    // waited for.
    func requestBody(_ bytes: UnsafeRawBufferPointer) {}
    func requestBodyEnded() {}
    func responseDrained() {}
    func exchangeAborted(_ reason: ExchangeEnd) {}
    func serverAnswered(_ exchange: ServerExchange) {}
    func connection(_ event: ConnectionEvent, on listener: ListenerInfo) {}
}
