import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The thread-safe face of an `EventLoop`: a queue of work plus an eventfd that wakes the
/// loop. The work runs on the loop's thread with the loop in hand.
public final class EventLoopHandle: Sendable {
    public typealias Work = @Sendable (EventLoop) -> Void

    let wakeFD: Int32
    private let queue = Mutex<[Work]>([])

    init(wakeFD: Int32) {
        self.wakeFD = wakeFD
    }

    deinit {
        close(wakeFD)
    }

    /// Queues `work` for the loop and wakes it. Safe from any thread.
    public func execute(_ work: @escaping Work) {
        let wasEmpty = queue.withLock { pending in
            pending.append(work)
            return pending.count == 1
        }
        if wasEmpty {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
    }

    func takeWork() -> [Work] {
        queue.withLock { pending in
            let work = pending
            pending.removeAll()
            return work
        }
    }
}
