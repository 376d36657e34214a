/// Eight-bytes-at-a-time tests ("SWAR", as in picohttpparser's and Hacker's Delight's
/// byte tricks) for checking field values and comparing names: the bytewise code then
/// deals with the byte a word test stops at.
extension ASCII {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// How many bytes at the start of `word` (in memory order) are SP or visible ASCII
    /// (0x20…0x7E), 0 to 8: the common bytes of a field value, needing no further look.
    @inline(__always)
    static func plainVisiblePrefix(_ word: UInt64) -> Int {
        // A byte below 0x20 borrows into its high bit; a byte above 0x7E carries into it
        // (or has it set already). A borrow or carry can flag a byte after the first one
        // that is not plain, never one before it: the lowest flag is exact.
        let below = (word &- ones &* 0x20) & ~word & highBits
        let above = ((word &+ ones &* (0x7F - 0x7E)) | word) & highBits
        return (below | above).trailingZeroBitCount / 8
    }

    /// How many bytes at the start of `word` are letters, digits or "-", 0 to 8: what field
    /// names are made of. The bytewise test (`isTokenByte`) deals with the other token bytes.
    @inline(__always)
    static func nameBytePrefix(_ word: UInt64) -> Int {
        // For bytes below 0x80, adding 0x80 - lo sets a byte's high bit when it is ≥ lo, and
        // adding 0x7F - hi when it is > hi; no sum carries into the next byte. Bytes from
        // 0x80 up are taken out by `~word`.
        @inline(__always) func within(_ bytes: UInt64, _ lo: UInt64, _ hi: UInt64) -> UInt64 {
            (bytes &+ ones &* (0x80 - lo)) & ~(bytes &+ ones &* (0x7F - hi))
        }
        let low = word & ~highBits
        let letter = within(low | ones &* 0x20, 0x61, 0x7A)
        let digit = within(low, 0x30, 0x39)
        let dash = within(low, 0x2D, 0x2D)
        let accepted = (letter | digit | dash) & ~word & highBits
        return (~accepted & highBits).trailingZeroBitCount / 8
    }

    @inline(__always)
    static func loadWord(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Whether every byte of `bytes` is a field-value byte (`isFieldValueByte`), eight at a
    /// time while they are plain visible ASCII.
    static func isFieldValue(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index < bytes.count {
            if index + 8 <= bytes.count {
                let plain = plainVisiblePrefix(loadWord(bytes, index))
                index += plain
                if plain == 8 { continue }
            }
            guard index < bytes.count else { break }
            guard isFieldValueByte(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    @inline(__always)
    private static func loadWord(_ base: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func loadHalfWord(_ base: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }

    /// `word` with each of its bytes A…Z made a…z, and no other byte changed.
    @inline(__always)
    static func lowercaseWord(_ word: UInt64) -> UInt64 {
        // For a byte below 0x80, adding 0x3F sets its high bit when it is ≥ "A", adding
        // 0x25 when it is > "Z"; neither carries into the next byte.
        let low = word & ~highBits
        let upper = (low &+ ones &* 0x3F) & ~(low &+ ones &* 0x25) & ~word & highBits
        return word | (upper >> 2)
    }

    /// Whether the `count` bytes at `lhs` and `rhs` are equal ignoring ASCII case, eight at
    /// a time. `rhsIsLowercase`: `rhs` needs no folding.
    @inline(__always)
    static func equalsCaseInsensitive(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer, count: Int,
                                      rhsIsLowercase: Bool = false) -> Bool {
        @inline(__always) func same(_ left: UInt64, _ right: UInt64) -> Bool {
            lowercaseWord(left) == (rhsIsLowercase ? right : lowercaseWord(right))
        }
        // Whole words, the last one overlapping the one before: no byte-by-byte tail.
        if count >= 8 {
            var offset = 0
            while offset + 8 < count {
                guard same(loadWord(lhs, offset), loadWord(rhs, offset)) else { return false }
                offset += 8
            }
            return same(loadWord(lhs, count - 8), loadWord(rhs, count - 8))
        }
        if count >= 4 {
            return same(loadHalfWord(lhs, 0), loadHalfWord(rhs, 0))
                && same(loadHalfWord(lhs, count - 4), loadHalfWord(rhs, count - 4))
        }
        for offset in 0..<count {
            let left = UInt64(lhs.load(fromByteOffset: offset, as: UInt8.self))
            guard same(left, UInt64(rhs.load(fromByteOffset: offset, as: UInt8.self))) else { return false }
        }
        return true
    }
}
