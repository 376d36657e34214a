/// Where the frames of one direction of a WebSocket connection begin and end (RFC 6455
/// §5.2), read from the bytes as they are relayed: only the headers are looked at, never
/// the payloads. A relay that must close the connection itself writes its close frame
/// where a frame ends, never inside one.
public struct WebSocketFrameBoundary: Sendable, Equatable {
    /// Header bytes of the frame being read (2 to 14 of them), or the payload bytes left.
    enum Position: Sendable, Equatable {
        case header([UInt8])
        case payload(remaining: UInt64)
    }

    var position = Position.header([])
    /// A close frame's header went by (RFC 6455 §5.5.1: its sender sends nothing after it).
    public private(set) var sawClose = false

    public init() {}

    /// Between two frames: nothing of a frame has been seen that is not complete.
    public var isAtBoundary: Bool { position == .header([]) }

    public mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            switch position {
            case .payload(let remaining):
                let taken = min(remaining, UInt64(bytes.count - index))
                index += Int(taken)
                position = remaining == taken ? .header([]) : .payload(remaining: remaining - taken)
            case .header(var header):
                header.append(bytes[index])
                index += 1
                position = Self.afterHeaderByte(header)
                if header.count == 1, header[0] & 0x0F == Self.closeOpcode { sawClose = true }
            }
        }
    }

    /// The header so far, or the payload once the header is complete: 2 bytes, then 2 or 8
    /// of extended length (126, 127), then 4 of masking key when the mask bit is set.
    private static func afterHeaderByte(_ header: [UInt8]) -> Position {
        guard header.count >= 2 else { return .header(header) }
        let masked = header[1] & 0x80 != 0
        let short = UInt64(header[1] & 0x7F)
        let extended = short == 126 ? 2 : short == 127 ? 8 : 0
        let length = 2 + extended + (masked ? 4 : 0)
        guard header.count == length else { return .header(header) }
        let payload = extended == 0 ? short : header[2..<(2 + extended)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return payload == 0 ? .header([]) : .payload(remaining: payload)
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
