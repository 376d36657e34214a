/// Eight-bytes-at-a-time tests ("SWAR", as in picohttpparser's and Hacker's Delight's
/// byte tricks) for the two long loops of the decoder: finding line ends and checking
/// field values. Each answers "does any byte of the word …" exactly; the bytewise code
/// then deals with the word that has one.
extension ASCII {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether some byte of `word` is zero.
    @inline(__always)
    static func hasZeroByte(_ word: UInt64) -> Bool {
        (word &- ones) & ~word & highBits != 0
    }

    /// Whether some byte of `word` is CR or LF.
    @inline(__always)
    static func hasLineBreak(_ word: UInt64) -> Bool {
        hasZeroByte(word ^ (ones &* UInt64(cr))) || hasZeroByte(word ^ (ones &* UInt64(lf)))
    }

    /// Whether every byte of `word` is SP or visible ASCII (0x20…0x7E): the common case of
    /// a field value, needing no further look.
    @inline(__always)
    static func isPlainVisible(_ word: UInt64) -> Bool {
        // A byte below 0x20 borrows into its high bit; a byte above 0x7E carries into it
        // (or has it set already). Neither may happen for the word to pass.
        let below = (word &- ones &* 0x20) & ~word & highBits
        let above = ((word &+ ones &* (0x7F - 0x7E)) | word) & highBits
        return below | above == 0
    }

    @inline(__always)
    static func loadWord(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
