/// The bytes read from a client and not yet consumed by the decoder. One allocation per
/// connection, grown only when a head is larger than the current capacity (bounded by the
/// header limit), compacted instead of reallocated.
struct InputBuffer: ~Copyable {
    private var storage: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private var start = 0
    private var end = 0

    init(capacity: Int) {
        self.capacity = capacity
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    var readableCount: Int { end - start }
    var isEmpty: Bool { start == end }

    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage + start, count: end - start)
    }

    /// Space after the readable bytes, compacting first so that the free space is as large
    /// as the buffer allows.
    mutating func writableSpace() -> UnsafeMutableRawBufferPointer {
        if start > 0 && (end == capacity || start == end) {
            if start < end { (storage).copyMemory(from: storage + start, byteCount: end - start) }
            end -= start
            start = 0
        }
        return UnsafeMutableRawBufferPointer(start: storage + end, count: capacity - end)
    }

    mutating func didWrite(_ count: Int) {
        end += count
    }

    mutating func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
        }
    }

    /// Doubles the capacity up to `limit`; returns false when already at the limit.
    mutating func grow(upTo limit: Int) -> Bool {
        guard capacity < limit else { return false }
        let newCapacity = min(capacity * 2, limit)
        let newStorage = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newStorage.copyMemory(from: storage + start, byteCount: end - start)
        storage.deallocate()
        storage = newStorage
        end -= start
        start = 0
        capacity = newCapacity
        return true
    }
}
