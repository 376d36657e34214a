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
