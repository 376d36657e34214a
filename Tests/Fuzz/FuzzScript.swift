// The fuzzer's input read as a script, for a target that drives a state machine rather than
// a decoder: a byte names the next event and the bytes after it are its arguments. Reading
// past the end gives zeros and short slices, so that every input is a script and every
// mutation means something.

/// The fuzzer's input, read front to back.
struct FuzzScript {
    private let input: UnsafeRawBufferPointer
    private var position = 0

    init(_ input: UnsafeRawBufferPointer) {
        self.input = input
    }

    var isAtEnd: Bool { position >= input.count }

    /// The next byte; 0 past the end.
    mutating func byte() -> UInt8 {
        guard position < input.count else { return 0 }
        defer { position += 1 }
        return input[position]
    }

    /// The next `count` bytes, fewer at the end.
    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(input.count, position + count)
        defer { position = end }
        return Array(input[position..<end])
    }
}
