/// Small output buffers kept by one loop for its connections. A connection takes one for a
/// response and gives it back once everything queued in it has been written and no exchange
/// is under way, so that an idle kept-alive connection (or an idle relay) holds no output
/// buffer while busy ones do not pay a malloc and free per response. Loop-confined, like
/// everything it serves.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
final class OutputBufferPool {
    /// Larger buffers (left by a big or slow download) are freed rather than kept.
    let maxKeptCapacity: Int
    private let maxKept: Int
    @exclusivity(unchecked) private var kept: [[UInt8]] = []

    init(maxKeptCapacity: Int, maxKept: Int) {
        self.maxKeptCapacity = maxKeptCapacity
        self.maxKept = maxKept
    }

    /// An empty buffer, with the capacity of one given back earlier when there is one.
    func take() -> [UInt8] {
        kept.popLast() ?? []
    }

    /// Takes `buffer`'s storage, or frees it, and leaves `buffer` empty with no capacity.
    func give(_ buffer: inout [UInt8]) {
        if buffer.capacity > 0, buffer.capacity <= maxKeptCapacity, kept.count < maxKept {
            buffer.removeAll(keepingCapacity: true)
            kept.append(buffer)
        }
        buffer = []
    }
}
