import LatchkeyLoop
import Testing

@Suite struct InputBufferTests {
    /// Writes `bytes` into the buffer's free space, as a read would.
    private func write(_ bytes: [UInt8], into buffer: inout InputBuffer) {
        let space = buffer.writableSpace()
        bytes.withUnsafeBytes { space.copyMemory(from: $0) }
        buffer.didWrite(bytes.count)
    }

    @Test func takesAPooledBufferToReadAndGivesItBackWhenEmpty() {
        let pool = BufferPool(bufferSize: 64, maxKept: 4)
        var buffer = InputBuffer(pool: pool)
        let before = buffer.capacity
        write([1, 2, 3], into: &buffer)
        let reading = buffer.capacity
        buffer.releaseIfEmpty()
        let holding = buffer.capacity
        buffer.consume(3)
        buffer.releaseIfEmpty()
        let released = buffer.capacity
        #expect(before == 0, "no buffer before the first read")
        #expect(reading == 64)
        #expect(holding == 64, "bytes still buffered keep the buffer")
        #expect(released == 0)
        #expect(pool.keptCount == 1)
    }

    @Test func compactsBeforeGrowingAndAGrownBufferIsFreedNotPooled() {
        let pool = BufferPool(bufferSize: 8, maxKept: 4)
        var buffer = InputBuffer(pool: pool)
        write(Array(1...8), into: &buffer)
        buffer.consume(6)
        // Two bytes left at the end of a full buffer: they move to the front.
        let space = buffer.writableSpace().count
        write(Array(9...14), into: &buffer)
        let full = buffer.isFull
        let grew = buffer.grow(upTo: 32)
        let capacity = buffer.capacity
        let readable = Array(buffer.readable)
        #expect(space == 6)
        #expect(full && grew)
        #expect(capacity == 16)
        #expect(readable == Array(7...14))
        #expect(pool.keptCount == 1, "the pooled buffer went back when the grown one replaced it")
        buffer.consume(8)
        buffer.releaseIfEmpty()
        #expect(pool.keptCount == 1)
    }

    @Test func theDeinitGivesTheBufferBack() {
        let pool = BufferPool(bufferSize: 8, maxKept: 4)
        do {
            var buffer = InputBuffer(pool: pool)
            write([1], into: &buffer)
        }
        #expect(pool.keptCount == 1)
    }
}
