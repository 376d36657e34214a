/// Where the encoders write: an array, or a head being written (`RequestHeadWriter`).
protocol ByteSink: ~Copyable {
    mutating func write(_ bytes: UnsafeRawBufferPointer)
    mutating func write(_ byte: UInt8)
}

extension ByteSink where Self: ~Copyable {
    /// The text's bytes in one copy.
    mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { write(UnsafeRawBufferPointer($0)) }
    }
}

extension Array: ByteSink where Element == UInt8 {
    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self))
    }

    mutating func write(_ byte: UInt8) {
        append(byte)
    }
}

/// Writes into memory sized beforehand for the most that will be written: a head whose
/// size is bounded goes out as plain copies. Written through an array's `append`, each of
/// its dozen pieces checked the array's uniqueness and capacity, which cost as much as the
/// copies.
struct BoundedByteSink: ByteSink, ~Copyable {
    private let memory: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    init(_ memory: UnsafeMutableRawBufferPointer) {
        self.memory = memory
    }

    @inline(__always)
    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        precondition(bytes.count <= memory.count - count, "a head written past its bound")
        memory.baseAddress.unsafelyUnwrapped.advanced(by: count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func write(_ byte: UInt8) {
        precondition(count < memory.count, "a head written past its bound")
        memory[count] = byte
        count += 1
    }
}

extension Array where Element == UInt8 {
    /// Appends what `body` writes, `maxCount` bytes at most: written to temporary memory
    /// (the stack, for a head's size), then appended in one copy. An array cannot grow by
    /// bytes not yet written; growing it by zeroes first cost more than the writes.
    mutating func append(atMost maxCount: Int, _ body: (inout BoundedByteSink) -> Void) {
        withUnsafeTemporaryAllocation(byteCount: maxCount, alignment: 1) { memory in
            var sink = BoundedByteSink(memory)
            body(&sink)
            append(contentsOf: UnsafeRawBufferPointer(rebasing: memory[..<sink.count]).assumingMemoryBound(to: UInt8.self))
        }
    }
}
