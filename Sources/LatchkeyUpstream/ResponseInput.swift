import LatchkeyLoop

/// The bytes read from one raw upstream connection and not yet decoded. Kept with the
/// connection (`PooledConnection`) across its exchanges, so that a reused connection reads
/// into the buffer it has. It compacts before it grows, and grows only for a head longer
/// than its size, which the decoder's limits bound.
struct ResponseInput {
    private var storage: [UInt8]
    private var start = 0
    private var end = 0

    init(capacity: Int = 16 * 1024) {
        storage = [UInt8](repeating: 0, count: capacity)
    }

    var isEmpty: Bool { start == end }

    func withReadable<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }

    mutating func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
        }
    }

    /// Reads from `connection` into the free space: the count read, 0 when the peer closed,
    /// nil when nothing is ready. `filled`: the read took all the space it had, so more may
    /// wait in the socket.
    mutating func read(from connection: RawConnection) throws(SystemError) -> (count: Int?, filled: Bool) {
        makeRoom()
        let room = storage.count - end
        var failure: SystemError?
        let count = storage.withUnsafeMutableBytes { buffer -> Int? in
            do throws(SystemError) {
                return try connection.receive(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
            } catch {
                failure = error
                return nil
            }
        }
        if let failure { throw failure }
        if let count { end += count }
        return (count, count == room)
    }

    /// Free space after the bytes held: moved to the front when they fill the end, doubled
    /// when they fill all of it.
    private mutating func makeRoom() {
        guard end == storage.count else { return }
        if start > 0 {
            storage.withUnsafeMutableBytes { buffer in
                buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            }
            end -= start
            start = 0
        } else {
            storage += repeatElement(0, count: storage.count)
        }
    }
}
