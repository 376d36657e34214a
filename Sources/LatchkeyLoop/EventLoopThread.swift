import Foundation
import Synchronization

/// Starts an `EventLoop` on a thread of its own. The loop is created on that thread and
/// never leaves it; `setUp` runs there first to create the loop's per-thread state
/// (listeners, curl multi), then the loop runs until stopped.
public final class EventLoopThread: Sendable {
    public let handle: EventLoopHandle
    public let index: Int
    private let running = DispatchGroup()

    /// Blocks the caller until the loop exists and `setUp` has returned; rethrows what
    /// `setUp` or the loop's creation threw. `failed` runs on the loop's thread if the loop
    /// itself fails later (`EventLoop.run()`); by default that ends the process with the
    /// error, since the loop's connections and timers would otherwise hang unseen.
    public init(
        index: Int,
        failed: @escaping @Sendable (SystemError) -> Void = EventLoopThread.endProcess,
        setUp: @escaping @Sendable (EventLoop) throws -> Void
    ) throws {
        let ready = DispatchSemaphore(value: 0)
        let outcome = StartOutcome()
        let running = self.running
        running.enter()
        let thread = Thread {
            defer { running.leave() }
            let loop: EventLoop
            do {
                loop = try EventLoop(index: index)
                try setUp(loop)
            } catch {
                outcome.result.withLock { $0 = .failure(error) }
                ready.signal()
                return
            }
            outcome.result.withLock { $0 = .success(loop.handle) }
            ready.signal()
            do throws(SystemError) {
                try loop.run()
            } catch {
                failed(error)
            }
        }
        thread.name = "latchkey-loop-\(index)"
        thread.start()
        ready.wait()
        self.index = index
        self.handle = try outcome.result.withLock { try $0!.get() }
    }

    /// The default for a failed loop: a crash report naming the error.
    @Sendable public static func endProcess(_ error: SystemError) {
        fatalError("event loop \(Thread.current.name ?? "") stopped: \(error)")
    }

    /// Waits until the loop has returned from `run()`.
    public func join() {
        running.wait()
    }
}

/// What the loop thread reports back to the thread that started it.
private final class StartOutcome: Sendable {
    let result = Mutex<Result<EventLoopHandle, any Error>?>(nil)
}
