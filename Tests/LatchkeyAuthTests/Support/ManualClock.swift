import Foundation
import Synchronization

/// Time that moves only when a test says: `now` for an identity's `clock`, `sleep(until:)`
/// for its `sleep`. Sleepers wake when `advance` reaches their moment, or throw when their
/// task is cancelled.
final class ManualClock: Sendable {
    private struct Sleeper {
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Now: ~Copyable {
        var time: Date
        var next = 0
        var sleepers: [Int: Sleeper] = [:]
    }

    private let state: Mutex<Now>

    init(_ start: Date) {
        state = Mutex(Now(time: start))
    }

    var now: Date { state.withLock { $0.time } }

    /// Sleepers waiting for a moment still to come.
    var sleepers: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Date) async throws {
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let due = state.withLock { state -> Bool in
                    if Task.isCancelled || state.time >= deadline { return true }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if due { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Moves time on by `seconds` and wakes the sleepers whose moment came.
    func advance(by seconds: TimeInterval) {
        let woken = state.withLock { state -> [Sleeper] in
            state.time = state.time.addingTimeInterval(seconds)
            let due = state.sleepers.filter { $0.value.deadline <= state.time }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return Array(due.values)
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }
}
