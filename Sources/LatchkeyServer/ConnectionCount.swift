import Synchronization

/// The client connections open in the whole process, shared by every loop's server, so
/// that `max_connections` is the process's limit however the loops' share of the accepts
/// falls (a per-loop split refused clients while another loop had room).
public final class ConnectionCount: Sendable {
    private let open = Atomic<Int>(0)

    public init() {}

    /// Counts one more connection if fewer than `limit` are open; false when full.
    func admit(limit: Int) -> Bool {
        var current = open.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = open.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func release() {
        open.subtract(1, ordering: .relaxed)
    }

    /// Open connections now, for tests and status.
    public var current: Int { open.load(ordering: .relaxed) }
}
