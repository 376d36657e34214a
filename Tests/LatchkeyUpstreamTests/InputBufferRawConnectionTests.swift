import LatchkeyLoop
import Testing
@testable import LatchkeyUpstream

/// `InputBuffer.read(from:)`, a raw upstream connection's reads, against a scripted connection.
@Suite struct InputBufferRawConnectionTests {
    /// Hands out `chunks` one per read (as much of each as fits), then nil; 0 once `closed`.
    private final class ScriptedConnection: RawConnection {
        var chunks: [[UInt8]]
        var closed = false
        init(_ chunks: [[UInt8]]) { self.chunks = chunks }

        func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
            guard !chunks.isEmpty else { return closed ? 0 : nil }
            let count = min(buffer.count, chunks[0].count)
            chunks[0].withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            chunks[0].removeFirst(count)
            if chunks[0].isEmpty { chunks.removeFirst() }
            return count
        }

        func watch(_ events: IOEvents, handler: IOHandler) throws(SystemError) {}
        var mayHoldReadBytes: Bool { false }
        func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int? { bytes.count }
        var canHalfClose: Bool { true }
        func finishSending() {}
        func close() {}
    }

    @Test func aFullBufferDoublesAndTheReadsSayWhenTheyFilledTheSpace() throws {
        let pool = BufferPool(bufferSize: 8, maxKept: 4)
        var input = InputBuffer(pool: pool)
        let connection = ScriptedConnection([Array(1...12)])
        let first = try input.read(from: connection)
        let second = try input.read(from: connection)
        let third = try input.read(from: connection)
        connection.closed = true
        let fourth = try input.read(from: connection)
        let capacity = input.capacity
        let readable = Array(input.readable)
        #expect(first.count == 8 && first.filled)
        #expect(second.count == 4 && !second.filled, "the full buffer doubled: 8 bytes of room for 4")
        #expect(third.count == nil && !third.filled)
        #expect(fourth.count == 0)
        #expect(capacity == 16)
        #expect(readable == Array(1...12))
    }
}
