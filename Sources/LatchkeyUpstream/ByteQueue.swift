/// A FIFO of request-body bytes between `sendBody` and curl's read callback. One buffer,
/// read from the front; compacts when the consumed prefix dominates.
struct ByteQueue {
    private var storage: [UInt8] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 * 1024 && head * 2 >= storage.count {
            storage.removeSubrange(0..<head)
            head = 0
        }
        storage.append(contentsOf: bytes)
    }

    /// Copies up to `capacity` bytes into `destination` and drops them; returns the count.
    mutating func read(into destination: UnsafeMutableRawPointer, capacity: Int) -> Int {
        let n = min(capacity, count)
        guard n > 0 else { return 0 }
        storage.withUnsafeBytes { source in
            destination.copyMemory(from: source.baseAddress! + head, byteCount: n)
        }
        head += n
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        }
        return n
    }

    mutating func removeAll() {
        storage = []
        head = 0
    }
}
