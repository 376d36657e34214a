/// The bytes read from a client and not yet consumed by the decoder. Allocated when the
/// connection has something to read and released when it goes idle, so that ten thousand
/// idle keep-alive connections hold no buffers; grown only when a head is larger than the
/// current capacity (bounded by the header limit), compacted instead of reallocated.
struct InputBuffer: ~Copyable {
    private var storage: UnsafeMutableRawPointer?
    private(set) var capacity = 0
    private let initialCapacity: Int
    private var start = 0
    private var end = 0

    init(initialCapacity: Int) {
        self.initialCapacity = initialCapacity
    }

    deinit {
        storage?.deallocate()
    }

    var readableCount: Int { end - start }
    var isEmpty: Bool { start == end }
    /// No room left even after compaction.
    var isFull: Bool { storage != nil && end - start == capacity }

    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage.map { $0 + start }, count: end - start)
    }

    /// Space after the readable bytes, allocating or compacting first so that the free
    /// space is as large as the buffer allows.
    mutating func writableSpace() -> UnsafeMutableRawBufferPointer {
        guard let storage else {
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: initialCapacity, alignment: 16)
            self.storage = fresh
            capacity = initialCapacity
            return UnsafeMutableRawBufferPointer(start: fresh, count: capacity)
        }
        if start > 0 && (end == capacity || start == end) {
            if start < end { storage.copyMemory(from: storage + start, byteCount: end - start) }
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

    /// Frees the storage if nothing is buffered.
    mutating func releaseIfEmpty() {
        guard isEmpty, let storage else { return }
        storage.deallocate()
        self.storage = nil
        capacity = 0
    }

    /// Doubles the capacity up to `limit`; returns false when already at the limit.
    mutating func grow(upTo limit: Int) -> Bool {
        guard let storage else { return true }
        guard capacity < limit else { return false }
        let newCapacity = min(capacity * 2, limit)
        let newStorage = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newStorage.copyMemory(from: storage + start, byteCount: end - start)
        storage.deallocate()
        self.storage = newStorage
        end -= start
        start = 0
        capacity = newCapacity
        return true
    }
}
