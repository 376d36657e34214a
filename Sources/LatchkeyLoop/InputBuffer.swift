/// The bytes read from a connection (a client's, or a raw upstream connection's) and not
/// yet consumed by its decoder. Its storage comes from the loop's pool when the connection
/// has something to read and goes back when the connection goes idle, so that ten thousand
/// idle keep-alive connections hold no buffers. It grows (beyond the pool's size) only when
/// its owner asks, for a head larger than that, which the decoder's limits bound, and
/// compacts instead of reallocating.
///
/// `@inlinable`: its calls are on every read and decode of the server's and the upstream
/// client's connections, in other modules, where they were inlined when it lived beside
/// them (a call each costs more than these bodies).
public struct InputBuffer: ~Copyable {
    @usableFromInline var storage: UnsafeMutableRawPointer?
    /// The storage's size; 0 without storage.
    @inlinable public var capacity: Int { storageSize }
    @usableFromInline var storageSize = 0
    @usableFromInline var start = 0
    @usableFromInline var end = 0
    /// Held strongly: a buffer may go back after its pool's owner (a server, an upstream
    /// client) is gone.
    @usableFromInline let pool: BufferPool

    public init(pool: BufferPool) {
        self.pool = pool
    }

    deinit {
        if let storage { release(storage) }
    }

    @inlinable public var readableCount: Int { end - start }
    @inlinable public var isEmpty: Bool { start == end }
    /// No room left even after compaction.
    @inlinable public var isFull: Bool { storage != nil && end - start == capacity }

    @inlinable public var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage.map { $0 + start }, count: end - start)
    }

    /// Space after the readable bytes, taking a buffer or compacting first so that the
    /// free space is as large as the buffer allows.
    @inlinable public mutating func writableSpace() -> UnsafeMutableRawBufferPointer {
        guard let storage else {
            let fresh = pool.take()
            self.storage = fresh
            storageSize = pool.bufferSize
            return UnsafeMutableRawBufferPointer(start: fresh, count: capacity)
        }
        if start > 0 && (end == capacity || start == end) {
            if start < end { storage.copyMemory(from: storage + start, byteCount: end - start) }
            end -= start
            start = 0
        }
        return UnsafeMutableRawBufferPointer(start: storage + end, count: capacity - end)
    }

    @inlinable public mutating func didWrite(_ count: Int) {
        end += count
    }

    @inlinable public mutating func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
        }
    }

    /// Gives the storage back if nothing is buffered.
    @inlinable public mutating func releaseIfEmpty() {
        guard isEmpty, let storage else { return }
        release(storage)
        self.storage = nil
        storageSize = 0
    }

    /// Doubles the capacity up to `limit`; returns false when already at the limit.
    public mutating func grow(upTo limit: Int) -> Bool {
        guard let storage else { return true }
        guard capacity < limit else { return false }
        let newCapacity = min(capacity * 2, limit)
        let newStorage = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newStorage.copyMemory(from: storage + start, byteCount: end - start)
        release(storage)
        self.storage = newStorage
        end -= start
        start = 0
        storageSize = newCapacity
        return true
    }

    @usableFromInline func release(_ buffer: UnsafeMutableRawPointer) {
        if capacity == pool.bufferSize { pool.give(buffer) } else { buffer.deallocate() }
    }
}
