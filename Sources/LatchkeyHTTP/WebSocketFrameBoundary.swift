/// Where the frames of one direction of a WebSocket connection begin and end (RFC 6455
/// §5.2), read from the bytes as they are relayed: only the headers are looked at, never
/// the payloads, and nothing is allocated. A relay that must close the connection itself
/// writes its close frame where a frame ends, never inside one.
public struct WebSocketFrameBoundary: Sendable, Equatable {
    /// Header bytes seen of the frame being read; 0 between frames.
    private var seen: UInt8 = 0
    /// The header's whole length once its second byte is known (2 to 14), else 2.
    private var headerLength: UInt8 = 2
    /// Bytes of extended payload length after the first two (0, 2 or 8).
    private var extendedLength: UInt8 = 0
    /// The payload length, as far as its bytes have been read.
    private var payloadLength: UInt64 = 0
    /// Payload bytes still to pass, once the header is complete.
    private var remaining: UInt64 = 0
    /// A close frame's header went by (RFC 6455 §5.5.1: its sender sends nothing after it).
    public private(set) var sawClose = false

    public init() {}

    /// Between two frames: nothing of a frame has been seen that is not complete.
    public var isAtBoundary: Bool { seen == 0 && remaining == 0 }

    public mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        let count = bytes.count
        while index < count {
            if remaining > 0 {
                let taken = min(remaining, UInt64(count - index))
                index += Int(taken)
                remaining -= taken
                continue
            }
            header(bytes[index])
            index += 1
        }
    }

    /// One header byte: 2 bytes, then 2 or 8 of extended length (126, 127), then 4 of
    /// masking key when the mask bit is set.
    private mutating func header(_ byte: UInt8) {
        switch seen {
        case 0:
            if byte & 0x0F == Self.closeOpcode { sawClose = true }
        case 1:
            let short = byte & 0x7F
            extendedLength = short == 126 ? 2 : short == 127 ? 8 : 0
            headerLength = 2 + extendedLength + (byte & 0x80 != 0 ? 4 : 0)
            payloadLength = extendedLength == 0 ? UInt64(short) : 0
        case let position where position < 2 + extendedLength:
            payloadLength = payloadLength << 8 | UInt64(byte)
        default:
            break
        }
        seen += 1
        guard seen == headerLength else { return }
        remaining = payloadLength
        seen = 0
        headerLength = 2
        extendedLength = 0
        payloadLength = 0
    }

    /// RFC 6455 §5.5.1.
    static let closeOpcode: UInt8 = 0x8

    /// RFC 6455 §7.4.1: 1001, an endpoint going away (a server shutting down).
    public static let goingAway: UInt16 = 1001

    /// A close frame with `code` and no reason: unmasked from a server, masked with `mask`
    /// from a client (RFC 6455 §5.3: every client frame is masked).
    public static func closeFrame(code: UInt16, mask: (UInt8, UInt8, UInt8, UInt8)? = nil) -> [UInt8] {
        let payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        guard let mask else { return [0x88, 0x02] + payload }
        let key = [mask.0, mask.1, mask.2, mask.3]
        return [0x88, 0x82] + key + payload.enumerated().map { $1 ^ key[$0 % 4] }
    }
}
