import LatchkeyHTTP
import Testing

/// Frame boundaries read from relayed WebSocket bytes, whatever their split, and the close
/// frames a relay writes there.
struct WebSocketFrameBoundaryTests {
    /// A frame with `payload` bytes of payload: 7-bit, 16-bit or 64-bit length, masked or not.
    static func frame(_ payload: Int, masked: Bool) -> [UInt8] {
        var bytes: [UInt8] = [0x82]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload < 126 {
            bytes.append(maskBit | UInt8(payload))
        } else if payload <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(payload >> 8), UInt8(payload & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8((UInt64(payload) >> (UInt64($0) * 8)) & 0xFF) }
        }
        if masked { bytes += [1, 2, 3, 4] }
        return bytes + Array(repeating: 0x5A, count: payload)
    }

    @Test(arguments: [0, 1, 125, 126, 65_535, 65_536, 70_000], [false, true])
    func everySplitEndsAtTheFramesEnd(_ payload: Int, _ masked: Bool) {
        let wire = Self.frame(payload, masked: masked) + Self.frame(3, masked: masked)
        let first = Self.frame(payload, masked: masked).count
        for cut in Set([0, 1, 2, first - 1, first, first + 1, wire.count - 1].filter { $0 >= 0 && $0 <= wire.count }) {
            var boundary = WebSocketFrameBoundary()
            wire[..<cut].withUnsafeBytes { boundary.consume($0) }
            #expect(boundary.isAtBoundary == (cut == 0 || cut == first), "cut at \(cut)")
            wire[cut...].withUnsafeBytes { boundary.consume($0) }
            #expect(boundary.isAtBoundary)
        }
    }

    @Test func byteByByteAcrossManyFrames() {
        let wire = (0..<50).flatMap { Self.frame($0 * 7, masked: $0 % 2 == 0) }
        var boundary = WebSocketFrameBoundary()
        var ends = 0
        for byte in wire {
            [byte].withUnsafeBytes { boundary.consume($0) }
            if boundary.isAtBoundary { ends += 1 }
        }
        #expect(boundary.isAtBoundary && ends == 50)
    }

    @Test func closeFramesFromAServerAndAClient() {
        #expect(WebSocketFrameBoundary.closeFrame(code: 1001) == [0x88, 0x02, 0x03, 0xE9])
        let masked = WebSocketFrameBoundary.closeFrame(code: 1001, mask: (0x11, 0x22, 0x33, 0x44))
        #expect(masked == [0x88, 0x82, 0x11, 0x22, 0x33, 0x44, 0x03 ^ 0x11, 0xE9 ^ 0x22])
        var boundary = WebSocketFrameBoundary()
        Self.frame(3, masked: true).withUnsafeBytes { boundary.consume($0) }
        #expect(!boundary.sawClose)
        masked.withUnsafeBytes { boundary.consume($0) }
        #expect(boundary.isAtBoundary && boundary.sawClose)
    }
}
