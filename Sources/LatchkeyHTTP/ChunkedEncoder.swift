/// The chunked transfer coding for response bodies (RFC 9112 §7.1): per chunk,
/// `appendChunkHeader(size:)`, the data, then `chunkTerminator`; at the end `lastChunk`.
public enum ChunkedEncoder {
    /// Appends `size` in lowercase hex and CRLF: `1a\r\n`. `size` must be positive; a zero
    /// size would end the body (use `lastChunk`).
    public static func appendChunkHeader(size: Int, into buffer: inout [UInt8]) {
        assert(size > 0, "a chunk of size 0 is the last chunk")
        let value = UInt(max(size, 0))
        let digits = value == 0 ? 1 : (UInt.bitWidth - value.leadingZeroBitCount + 3) / 4
        var shift = (digits - 1) * 4
        while shift >= 0 {
            let nibble = UInt8((value >> UInt(shift)) & 0xF)
            buffer.append(nibble < 10 ? ASCII.zero + nibble : 0x61 + nibble - 10)
            shift -= 4
        }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    /// The CRLF after a chunk's data.
    public static let chunkTerminator: [UInt8] = [ASCII.cr, ASCII.lf]

    /// The zero-size chunk and the empty trailer section that end a chunked body.
    public static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
}
