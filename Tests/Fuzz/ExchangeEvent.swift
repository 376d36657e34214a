// What the exchange target's script says: the request, from its first three bytes, then the
// events of one exchange, one a byte. The events are named by letters, for readable seeds;
// any other byte picks one by its value.

@testable import LatchkeyUpstream

/// The request under test. First byte: bits 0–1 the body (none, a length in bytes, chunked,
/// a length in KiB, which reaches past `RequestOutput.resendLimit`), bits 2–3 the method,
/// bit 4 `Connection: close`, bit 5 no first-byte timer. Second: the body's length. Third:
/// the timeouts (idle in its low 5 bits, first-byte in its top 3, in seconds).
struct ExchangeRequest {
    let method: String
    let body: UpstreamBody
    let requestCloses: Bool
    let idleTimeout: Duration
    /// Zero: the glue arms no first-byte timer.
    let firstByteTimeout: Duration

    init(reading script: inout FuzzScript) {
        let shape = script.byte()
        let size = UInt64(script.byte())
        let times = script.byte()
        method = ["GET", "HEAD", "POST", "PUT"][Int(shape >> 2 & 3)]
        body = switch shape & 3 {
        case 0: .none
        case 1: .length(size)
        case 2: .streaming
        default: .length(size * 1024 + 1)
        }
        requestCloses = shape & 0x10 != 0
        firstByteTimeout = shape & 0x20 != 0 ? .zero : .seconds(Int(times >> 5) + 1)
        idleTimeout = .seconds(Int(times & 0x1F) + 1)
    }

    var chunked: Bool { body == .streaming }

    /// The head as `UpstreamRequest.encodedHead` writes it: the machine sends it as it is.
    var head: [UInt8] {
        var text = "\(method) / HTTP/1.1\r\nHost: upstream\r\n"
        switch body {
        case .none: break
        case .length(let length): text += "Content-Length: \(length)\r\n"
        case .streaming: text += "Transfer-Encoding: chunked\r\n"
        }
        if requestCloses { text += "Connection: close\r\n" }
        return Array((text + "\r\n").utf8)
    }
}

/// One event of the exchange, as the glue (`HTTP1Transfer`) meets it.
enum ExchangeEvent {
    /// A connection is ready: from the pool (`reused`) or made by libcurl.
    case connect(reused: Bool)
    /// libcurl could not make the connection.
    case connectFails
    case body([UInt8])
    case bodyEnds
    /// One send(2) of the glue's write loop: the connection takes at most this many bytes
    /// (0: EAGAIN), or refuses them (nil: EPIPE).
    case write(upTo: Int?)
    /// The glue's whole write loop, the connection taking everything.
    case writeAll
    case receive([UInt8])
    /// A read returned 0.
    case peerCloses
    /// A read failed (a reset).
    case reset
    /// How the delegate answers the next body slices: more, or a pause.
    case delegateWantsMore(Bool)
    /// The delegate cancels from inside the next delivery.
    case delegateCancelsOnDelivery
    case resume
    case firstByteTimer
    case idleTimer
    case cancel
    /// Time passes.
    case wait(Duration)

    private static let letters = Array("cCXbBewpEWrhzRmnkutiq+".utf8)

    init(reading script: inout FuzzScript) {
        let byte = script.byte()
        let letter = Self.letters.contains(byte) ? byte : Self.letters[Int(byte) % Self.letters.count]
        self = switch UnicodeScalar(letter) {
        case "c": .connect(reused: false)
        case "C": .connect(reused: true)
        case "X": .connectFails
        case "b": .body(script.bytes(Int(script.byte())))
        // Enough filler to write past the resend limit in a few events.
        case "B": .body([UInt8](repeating: UInt8(ascii: "z"), count: Int(script.byte()) * 512))
        case "e": .bodyEnds
        case "w": .write(upTo: .max)
        case "p": .write(upTo: Int(script.byte()))
        case "E": .write(upTo: nil)
        case "W": .writeAll
        case "r": .receive(script.bytes(Int(script.byte())))
        case "h": .receive(Self.fragments[Int(script.byte()) % Self.fragments.count])
        case "z": .peerCloses
        case "R": .reset
        case "m": .delegateWantsMore(true)
        case "n": .delegateWantsMore(false)
        case "k": .delegateCancelsOnDelivery
        case "u": .resume
        case "t": .firstByteTimer
        case "i": .idleTimer
        case "q": .cancel
        default: .wait(.milliseconds(100 * Int(script.byte())))
        }
    }

    /// Pieces of responses, so that the fuzzer assembles whole ones in a few events.
    private static let fragments: [[UInt8]] = [
        "HTTP/1.1 200 OK\r\n", "Content-Length: 5\r\n", "\r\n", "hello",
        "Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n", "0\r\n\r\n", "HTTP/1.1 100 Continue\r\n\r\n",
        "HTTP/1.0 200 OK\r\n", "Connection: close\r\n", "HTTP/1.1 101 Switching Protocols\r\n\r\n", "HTTP/1.1 204 No Content\r\n",
        "HTTP/1.1 304 Not Modified\r\n", "HTTP/1.1 413 Content Too Large\r\n", "Content-Length: 0\r\n", "HTTP/1.1 103 Early Hints\r\n\r\n",
        "Trailer: T\r\n", "T: v\r\n\r\n", "Connection: keep-alive\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ].map { Array($0.utf8) }
}
