import LatchkeyHTTP
import LatchkeyLoop
import Testing
@testable import LatchkeyUpstream

/// curl_global_init once per process, before the first loop thread uses curl (a lazily
/// initialised global runs exactly once).
let curlInitialized: Bool = initializeCurlGlobally()

/// An event loop on its own thread with an `UpstreamClient` on it. Everything that touches
/// the client runs on the loop through `onLoop`.
final class UpstreamHarness: @unchecked Sendable {
    let thread: EventLoopThread
    /// Loop-confined: read and written only on the loop thread.
    private let state = LoopState()

    final class LoopState: @unchecked Sendable {
        var client: UpstreamClient?
    }

    init() throws {
        precondition(curlInitialized)
        let state = self.state
        thread = try EventLoopThread(index: 0) { loop in
            state.client = try UpstreamClient(loop: loop)
        }
    }

    /// Runs `body` on the loop and returns its result.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (UpstreamClient, EventLoop) -> T) async -> T {
        let state = self.state
        return await withCheckedContinuation { continuation in
            thread.handle.execute { loop in
                continuation.resume(returning: body(state.client!, loop))
            }
        }
    }

    /// Runs `body` on the loop with the client and a `done` function, and returns what is
    /// passed to `done` (first call wins). A watchdog on the loop returns `fallback` after
    /// `timeout`, so a bug fails the test instead of hanging the run.
    func awaitOnLoop<T: Sendable>(
        timeout: Duration = .seconds(30),
        fallback: T,
        _ body: @escaping @Sendable (UpstreamClient, EventLoop, @escaping (T) -> Void) -> Void
    ) async -> T {
        let state = self.state
        return await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            thread.handle.execute { loop in
                let once = OnceFlag()
                let done: (T) -> Void = { value in
                    guard !once.done else { return }
                    once.done = true
                    continuation.resume(returning: value)
                }
                after(timeout, on: loop) {
                    if !once.done { Issue.record("watchdog: the loop did not answer within \(timeout)") }
                    done(fallback)
                }
                body(state.client!, loop, done)
            }
        }
    }

    /// Starts `request` on `path` with a fresh `Recorder` and waits for `upstreamDidFinish`.
    func perform(
        _ request: UpstreamRequest,
        on path: UpstreamPath = .curl,
        setUp: @escaping @Sendable (Recorder, EventLoop) -> Void = { _, _ in },
        started: @escaping @Sendable (UpstreamTransfer, Recorder, EventLoop) -> Void = { _, _, _ in }
    ) async -> Outcome {
        await awaitOnLoop(fallback: Outcome.watchdog) { client, loop, done in
            let recorder = Recorder(finished: done)
            setUp(recorder, loop)
            let transfer = client.start(request, on: path, delegate: recorder)
            started(transfer, recorder, loop)
        }
    }

    /// Releases the client on its loop, then stops the loop.
    func shutDown() async {
        let state = self.state
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            thread.handle.execute { loop in
                state.client = nil
                loop.stop()
                continuation.resume()
            }
        }
        thread.join()
    }
}

/// Loop-confined: which of `done` and the watchdog came first.
final class OnceFlag {
    var done = false
}

/// What a transfer reported, copied off the loop.
struct Outcome: Sendable {
    var status: Int?
    var fields: HTTPFields?
    var body: [UInt8]
    var error: UpstreamError?
    var finishCount: Int
    var wantsBodyCount: Int
    var pauseCount: Int
    var headBeforeFinish: Bool

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    static let watchdog = Outcome(
        status: nil, fields: nil, body: [], error: UpstreamError(.other, detail: "test watchdog"),
        finishCount: 0, wantsBodyCount: 0, pauseCount: 0, headBeforeFinish: false
    )
}

/// A delegate that records everything; hooks let tests steer it. Loop-confined.
final class Recorder: UpstreamTransferDelegate, @unchecked Sendable {
    var status: Int?
    var fields: HTTPFields?
    var body: [UInt8] = []
    var finishCount = 0
    var wantsBodyCount = 0
    var pauseCount = 0
    var error: UpstreamError?
    /// Return false to pause (backpressure).
    var onBody: ((UpstreamTransfer, Recorder) -> Bool)?
    var onHead: ((UpstreamTransfer, Recorder) -> Void)?
    var onWantsBody: ((UpstreamTransfer, Recorder) -> Void)?
    private let finished: (Outcome) -> Void

    init(finished: @escaping (Outcome) -> Void) {
        self.finished = finished
    }

    var outcome: Outcome {
        Outcome(
            status: status, fields: fields, body: body, error: error, finishCount: finishCount,
            wantsBodyCount: wantsBodyCount, pauseCount: pauseCount, headBeforeFinish: status != nil
        )
    }

    func upstreamDidReceiveHead(_ transfer: UpstreamTransfer, status: Int, fields: consuming HTTPFields,
                                declared: DeclaredFraming) {
        self.status = status
        self.fields = fields
        onHead?(transfer, self)
    }

    func upstreamDidReceiveBody(_ transfer: UpstreamTransfer, _ bytes: UnsafeRawBufferPointer) -> Bool {
        body.append(contentsOf: bytes)
        let more = onBody?(transfer, self) ?? true
        if !more { pauseCount += 1 }
        return more
    }

    func upstreamWantsBody(_ transfer: UpstreamTransfer) {
        wantsBodyCount += 1
        onWantsBody?(transfer, self)
    }

    func upstreamDidFinish(_ transfer: UpstreamTransfer, error: UpstreamError?) {
        finishCount += 1
        self.error = error
        finished(outcome)
    }
}

/// Runs `action` on the loop after `delay` (the timer keeps itself alive while armed).
func after(_ delay: Duration, on loop: EventLoop, _ action: @escaping () -> Void) {
    loop.arm(ClosureTimer(action), after: delay)
}

func request(
    _ url: String,
    fields: HTTPFields = [:],
    body: UpstreamBody = .none,
    options: UpstreamOptions = UpstreamOptions()
) -> UpstreamRequest {
    UpstreamRequest(method: "GET", url: url, fields: fields, body: body, options: options)
}

func request(
    _ method: String,
    _ url: String,
    fields: HTTPFields = [:],
    body: UpstreamBody = .none,
    options: UpstreamOptions = UpstreamOptions()
) -> UpstreamRequest {
    UpstreamRequest(method: method, url: url, fields: fields, body: body, options: options)
}
