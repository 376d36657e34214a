import Synchronization

/// The tasks an object starts that outlive the call that started them (a token request, a
/// save, a restore): each is held until it ends, and `cancelAll` cancels those still
/// running and refuses new ones, so that nothing keeps working after its owner stopped
/// (swift-service-lifecycle's rule: no unowned `Task {}`).
final class OwnedTasks: Sendable {
    private struct Held: ~Copyable {
        var next: UInt64 = 0
        var running: [UInt64: Task<Void, Never>] = [:]
        var closed = false
    }

    private let held = Mutex(Held())

    /// Starts `work` as a task held until it ends; nothing after `cancelAll`. Returns
    /// whether it started.
    @discardableResult
    func run(_ work: @escaping @Sendable () async -> Void) -> Bool {
        held.withLock { held in
            guard !held.closed else { return false }
            let id = held.next
            held.next += 1
            // Made under the lock: the task's own removal waits until it is recorded.
            held.running[id] = Task { [weak self] in
                await work()
                self?.ended(id)
            }
            return true
        }
    }

    /// Cancels every running task and refuses new ones.
    func cancelAll() {
        let running = held.withLock { held in
            held.closed = true
            defer { held.running.removeAll() }
            return Array(held.running.values)
        }
        for task in running { task.cancel() }
    }

    /// Tasks started and not yet ended (or cancelled by `cancelAll`).
    var count: Int { held.withLock { $0.running.count } }

    private func ended(_ id: UInt64) {
        held.withLock { _ = $0.running.removeValue(forKey: id) }
    }
}
