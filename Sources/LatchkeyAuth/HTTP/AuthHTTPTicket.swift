import Synchronization

/// Names one `send` across threads, so that a task's cancellation can find its request on
/// the loop; the flag covers a cancellation that overtakes the start of the request.
final class AuthHTTPTicket: Sendable {
    private let cancelled = Atomic(false)

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func markCancelled() {
        cancelled.store(true, ordering: .releasing)
    }
}
