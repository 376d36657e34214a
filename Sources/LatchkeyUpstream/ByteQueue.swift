/// A FIFO of request bytes between `sendBody` and curl's read callback, or the socket of a
/// raw connection (`RequestOutput`): a ring, so that bytes are copied once in and once out
/// however the appends and reads interleave (curl takes up to its 64 KiB upload buffer at a
/// time, the client's bytes come a read at a time). It grows, keeping the order, only when
/// the bytes waiting outgrow it.
struct ByteQueue {
    /// The ring; its count is the capacity. Bytes outside the waiting ones are garbage.
    private var storage: [UInt8] = []
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }
    /// Bytes it holds before it grows (and copies what it holds).
    var capacity: Int { storage.count }

    /// `capacity`: room for this many bytes before the first growth (a body of known length
    /// reserves what it will hold at most).
    init(reserving capacity: Int = 0) {
        if capacity > 0 { storage = Self.uninitialized(capacity) }
    }

    /// A queue that waits to send `bytes`, with room for `capacity` in all. When they fill
    /// it (a request head without a body), they become the ring itself: no copy.
    init(holding bytes: [UInt8], reserving capacity: Int) {
        self.init()
        if capacity <= bytes.count {
            storage = bytes
            count = bytes.count
        } else {
            storage = Self.uninitialized(capacity)
            bytes.withUnsafeBytes { append($0) }
        }
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if count + bytes.count > storage.count { grow(toHold: count + bytes.count) }
        let capacity = storage.count
        let tail = (head + count) % capacity
        let first = min(bytes.count, capacity - tail)
        storage.withUnsafeMutableBytes { ring in
            ring.baseAddress!.advanced(by: tail).copyMemory(from: bytes.baseAddress!, byteCount: first)
            if first < bytes.count {
                ring.baseAddress!.copyMemory(from: bytes.baseAddress!.advanced(by: first), byteCount: bytes.count - first)
            }
        }
        count += bytes.count
    }

    /// Copies up to `capacity` bytes into `destination` and drops them; returns the count.
    mutating func read(into destination: UnsafeMutableRawPointer, capacity: Int) -> Int {
        let n = min(capacity, count)
        guard n > 0 else { return 0 }
        let first = min(n, storage.count - head)
        storage.withUnsafeBytes { ring in
            destination.copyMemory(from: ring.baseAddress!.advanced(by: head), byteCount: first)
            if first < n {
                destination.advanced(by: first).copyMemory(from: ring.baseAddress!, byteCount: n - first)
            }
        }
        count -= n
        head = count == 0 ? 0 : (head + n) % storage.count
        return n
    }

    /// The waiting bytes from `offset` on, as far as they lie contiguous in the ring (the
    /// rest follow from the ring's start): what a send(2) can take straight from the queue,
    /// with no copy. Empty when `offset` is at or past the end.
    func withContiguousBytes<R, E: Error>(from offset: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        guard offset < count else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let start = (head + offset) % storage.count
        let length = min(count - offset, storage.count - start)
        // Array's withUnsafeBytes rethrows untyped errors; the Result carries `E` through.
        return try storage.withUnsafeBytes { ring in
            Result { () throws(E) -> R in try body(UnsafeRawBufferPointer(rebasing: ring[start..<(start + length)])) }
        }.get()
    }

    /// Drops the first `n` waiting bytes (at most all of them).
    mutating func removeFirst(_ n: Int) {
        let n = min(n, count)
        guard n > 0 else { return }
        count -= n
        head = count == 0 ? 0 : (head + n) % storage.count
    }

    mutating func removeAll() {
        storage = []
        head = 0
        count = 0
    }

    /// A ring at least twice as large, the waiting bytes moved to its start in order.
    private mutating func grow(toHold needed: Int) {
        let waiting = count
        var larger = Self.uninitialized(max(needed, storage.count * 2, 16 * 1024))
        larger.withUnsafeMutableBytes { destination in
            _ = read(into: destination.baseAddress!, capacity: waiting)
        }
        storage = larger
        head = 0
        count = waiting
    }

    /// Bytes that are written before they are read: not zeroed first.
    private static func uninitialized(_ capacity: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: capacity) { _, initialized in initialized = capacity }
    }
}
