import LatchkeyLoop
import LatchkeyUpstream
import Synchronization

/// The control plane's one HTTP client: a dedicated event loop thread running an
/// `UpstreamClient`, so token and discovery requests go through the same libcurl stack
/// and TLS settings as upstream traffic, and no request blocks Swift's cooperative pool
/// or costs a thread of its own.
///
/// Requests reach the loop through its handle (a queue plus an eventfd); each `send`
/// resumes from the loop thread when its response is complete. Create one at start-up,
/// after `initializeCurlGlobally()`: `init` waits for the thread to be ready.
public final class AuthHTTPClient: Sendable {
    private let thread: EventLoopThread
    /// Set once by `shutdown()`. Requests are queued under this lock, so none can land
    /// behind the loop's last piece of work and wait forever.
    private let isShutDown = Mutex(false)

    public init() throws(AuthHTTPError) {
        do {
            thread = try EventLoopThread(index: 0) { loop in
                loop.attach(try AuthHTTPLoop(loop: loop))
            }
        } catch {
            throw AuthHTTPError(.other, detail: "cannot start the HTTP client's loop: \(error)")
        }
    }

    deinit {
        shutdown()
    }

    /// Sends `request` and returns the complete response, whatever its status. Throws for
    /// no response: connection, TLS or timeout failures, a body over the limit, the
    /// calling task's cancellation (which also stops the transfer), or shutdown.
    public func send(_ request: AuthHTTPRequest) async throws(AuthHTTPError) -> AuthHTTPResponse {
        let ticket = AuthHTTPTicket()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<AuthHTTPExchange.Outcome, Never>) in
                start(request, ticket: ticket) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            ticket.markCancelled()
            enqueue { loop in loop.attachment(AuthHTTPLoop.self)?.cancel(ticket) }
        }
        return try outcome.get()
    }

    /// Sends `request` and calls `report` once with the complete response or the failure,
    /// on the client's loop thread: for callers that live on an event loop themselves (the
    /// proxy's handoff calls), which must not wait in a task. Only the request's timeout
    /// or shutdown stops it.
    public func start(_ request: AuthHTTPRequest, report: @escaping @Sendable (Result<AuthHTTPResponse, AuthHTTPError>) -> Void) {
        start(request, ticket: AuthHTTPTicket(), report: report)
    }

    private func start(_ request: AuthHTTPRequest, ticket: AuthHTTPTicket,
                       report: @escaping @Sendable (AuthHTTPExchange.Outcome) -> Void) {
        let queued = enqueue { loop in
            loop.attachment(AuthHTTPLoop.self)?.start(request, ticket: ticket, report: report)
        }
        if !queued { report(.failure(.shutdown)) }
    }

    /// Fails every request in flight with `.shutdown`, closes the connections and stops
    /// the loop thread; later sends fail at once. Returns without waiting for the thread.
    public func shutdown() {
        let first = isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return !isShutDown
        }
        guard first else { return }
        thread.handle.execute { loop in loop.attachment(AuthHTTPLoop.self)?.shutDown() }
    }

    /// Queues `work` for the loop unless the client is shut down; false if it was.
    @discardableResult
    private func enqueue(_ work: @escaping EventLoopHandle.Work) -> Bool {
        isShutDown.withLock { isShutDown in
            guard !isShutDown else { return false }
            thread.handle.execute(work)
            return true
        }
    }
}
