/// The bytes read from a client and not yet consumed by the decoder. Its storage comes
/// from the loop's pool when the connection has something to read and goes back when the
/// connection goes idle, so that ten thousand idle keep-alive connections hold no
/// buffers. It grows (beyond the pool's size) only for a head larger than that, bounded by
/// the header limit, and compacts instead of reallocating.
struct InputBuffer: ~Copyable {
    private var storage: UnsafeMutableRawPointer?
    private(set) var capacity = 0
    private var start = 0
    private var end = 0
    /// The pool belongs to the server, which outlives every connection and its buffer.
    private unowned(unsafe) let pool: BufferPool

    init(pool: BufferPool) {
        self.pool = pool
    }

    deinit {
        if let storage { release(storage) }
    }

    var readableCount: Int { end - start }
    var isEmpty: Bool { start == end }
    /// No room left even after compaction.
    var isFull: Bool { storage != nil && end - start == capacity }

    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage.map { $0 + start }, count: end - start)
    }

    /// Space after the readable bytes, taking a buffer or compacting first so that the
    /// free space is as large as the buffer allows.
    mutating func writableSpace() -> UnsafeMutableRawBufferPointer {
        guard let storage else {
            let fresh = pool.take()
            self.storage = fresh
            capacity = pool.bufferSize
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

    /// Gives the storage back if nothing is buffered.
    mutating func releaseIfEmpty() {
        guard isEmpty, let storage else { return }
        release(storage)
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
        release(storage)
        self.storage = newStorage
        end -= start
        start = 0
        capacity = newCapacity
        return true
    }

    private func release(_ buffer: UnsafeMutableRawPointer) {
        if capacity == pool.bufferSize { pool.give(buffer) } else { buffer.deallocate() }
    }
}
