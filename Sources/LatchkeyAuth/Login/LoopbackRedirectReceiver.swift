import LatchkeyLoop
import LatchkeyServer
import Synchronization

/// Receives the authorization server's redirect back to `latchkey login` (RFC 8252 §7.3).
///
/// It listens on the IPv4 loopback literal, never `localhost`, which may resolve to
/// another interface or to ::1 (RFC 8252 §8.3). `init` binds, so that the redirect URI
/// (with the port the kernel chose for port 0) is known before the authorization URL is
/// made; `code(for:timeout:)` then serves the browser's requests with an `HTTPServer` on an
/// event loop of its own (`RedirectServer`), and closes the listener as soon as the login's
/// redirect has come, the timeout has passed or the task is cancelled. Every descriptor is
/// close-on-exec, so a browser started meanwhile never inherits the listener and keeps the
/// port open after Latchkey exits.
public final class LoopbackRedirectReceiver: Sendable {
    public let port: UInt16
    /// The redirect URI's path, e.g. `/callback`.
    public let path: String
    private let listener: ListeningSocket
    private let serving = Mutex(Serving.notStarted)

    private enum Serving {
        case notStarted
        /// Cancelled before its loop was running: the loop ends the login as it starts.
        case cancelled
        case running(EventLoopHandle)
    }

    /// `http://127.0.0.1:PORT/PATH`, the `redirect_uri` of the authorization request.
    public var redirectURI: String { "http://127.0.0.1:\(port)\(path)" }

    /// Binds 127.0.0.1:`port` (0: any free port) and listens.
    public init(port: UInt16 = 0, path: String = "/callback") throws(LoginError) {
        do {
            listener = try ListeningSocket(address: .ipv4(host: "127.0.0.1", port: Int(port)), index: 0, backlog: 16)
        } catch {
            throw .cannotListen(port: port, error)
        }
        self.port = UInt16(listener.info.boundAddress.port ?? Int(port))
        self.path = path
    }

    /// Waits for the redirect that belongs to `request` and returns its authorization
    /// code. Requests for other paths (a browser's `/favicon.ico`) get a 404 page and a
    /// redirect with another state a page saying so: neither ends the wait, but the latter
    /// is reported to `ignored`. An error redirect (`access_denied` when the user said no)
    /// ends it with `.refused`. Call once.
    public func code(
        for request: AuthorizationRequest, timeout: Duration, ignored: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws(LoginError) -> String {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, LoginError>, Never>) in
                serve(request, timeout: timeout, ignored: ignored, reply: Reply(continuation))
            }
        } onCancel: {
            cancel()
        }
        return try result.get()
    }

    private func serve(_ request: AuthorizationRequest, timeout: Duration, ignored: @escaping @Sendable (String) -> Void, reply: Reply) {
        let (listener, port, path) = (listener, port, path)
        let thread: EventLoopThread
        do {
            thread = try EventLoopThread(index: 0, failed: { reply.send(.failure(.cannotListen(port: port, $0))) }) { loop in
                let server = RedirectServer(
                    loop: loop, listener: listener, path: path, request: request, timeout: timeout,
                    ignored: ignored, finished: reply.send)
                try server.start()
            }
        } catch let error as SystemError {
            return reply.send(.failure(.cannotListen(port: port, error)))
        } catch {
            return reply.send(.failure(.failed("cannot serve the redirect: \(error)")))
        }
        let cancelledMeanwhile = serving.withLock { serving in
            precondition(!Self.isRunning(serving), "a redirect receiver serves one login")
            defer { serving = .running(thread.handle) }
            if case .cancelled = serving { return true }
            return false
        }
        if cancelledMeanwhile { Self.cancel(thread.handle) }
    }

    private func cancel() {
        let handle = serving.withLock { serving -> EventLoopHandle? in
            if case .running(let handle) = serving { return handle }
            serving = .cancelled
            return nil
        }
        if let handle { Self.cancel(handle) }
    }

    private static func cancel(_ handle: EventLoopHandle) {
        handle.execute { loop in loop.attachment(RedirectServer.self)?.end(.failure(.cancelled)) }
    }

    private static func isRunning(_ serving: Serving) -> Bool {
        if case .running = serving { return true }
        return false
    }
}

/// The continuation of `code(for:)`, resumed once: by the loop with the outcome, or on
/// failing to start it.
private final class Reply: Sendable {
    private let continuation: Mutex<CheckedContinuation<Result<String, LoginError>, Never>?>

    init(_ continuation: CheckedContinuation<Result<String, LoginError>, Never>) {
        self.continuation = Mutex(continuation)
    }

    @Sendable func send(_ result: Result<String, LoginError>) {
        continuation.withLock { $0.take() }?.resume(returning: result)
    }
}
