import Foundation
import LatchkeyTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 server on 127.0.0.1, port 0, for upstream tests. Each accepted
/// connection runs `handler` on a thread of its own with full control of the bytes: slow
/// chunks, delays, resets (SO_LINGER 0), echoes.
final class TestServer: Sendable {
    private let listener: LoopbackListener

    init(handler: @escaping @Sendable (TestConnection) -> Void) throws {
        listener = try LoopbackListener { fd in
            let connection = TestConnection(fd: fd)
            handler(connection)
            connection.close()
        }
    }

    var port: UInt16 { listener.port }
    /// Connections accepted so far.
    var acceptCount: Int { listener.acceptCount }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Stops accepting.
    func stop() { listener.stop() }
}

/// A request as the test server read it off the wire.
struct ReceivedRequest: Sendable {
    var head: String
    var requestLine: String
    var fields: [(name: String, value: String)]
    var body: [UInt8]
    var method: String { String(requestLine.split(separator: " ").first ?? "") }

    func values(_ name: String) -> [String] {
        fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }
}

/// One accepted connection, used from its own thread only.
final class TestConnection: @unchecked Sendable {
    let fd: Int32
    private var stream: SocketStream
    private var closed = false

    init(fd: Int32) {
        self.fd = fd
        stream = SocketStream(fd: fd)
    }

    /// Reads one request (head, then a Content-Length or chunked body). nil at EOF.
    func readRequest(headMethodHasNoBody: Bool = true) -> ReceivedRequest? {
        guard let headEnd = stream.readUntil([13, 10, 13, 10]) else { return nil }
        let headBytes = Array(stream.buffer[..<headEnd])
        stream.buffer.removeFirst(headEnd + 4)
        let head = String(decoding: headBytes, as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst()
        let fields = lines.map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            let value = colon < line.endIndex ? line[line.index(after: colon)...] : ""
            return (String(line[..<colon]), value.trimmingCharacters(in: .whitespaces))
        }
        var request = ReceivedRequest(head: head, requestLine: requestLine, fields: fields, body: [])
        if request.values("transfer-encoding").first?.lowercased() == "chunked" {
            while true {
                guard let lineEnd = stream.readUntil([13, 10]) else { return nil }
                let sizeLine = String(decoding: stream.buffer[..<lineEnd], as: UTF8.self)
                stream.buffer.removeFirst(lineEnd + 2)
                let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) ?? 0
                if size == 0 {
                    // Trailers until the empty line.
                    while let end = stream.readUntil([13, 10]) {
                        stream.buffer.removeFirst(end + 2)
                        if end == 0 { break }
                    }
                    break
                }
                guard stream.readAtLeast(size + 2) else { return nil }
                request.body += stream.buffer[..<size]
                stream.buffer.removeFirst(size + 2)
            }
        } else if let length = request.values("content-length").first.flatMap({ Int($0) }), length > 0 {
            guard stream.readAtLeast(length) else { return nil }
            request.body = Array(stream.buffer[..<length])
            stream.buffer.removeFirst(length)
        }
        return request
    }

    /// The next `count` bytes, whatever they are; nil at EOF before them.
    func readBytes(_ count: Int) -> [UInt8]? {
        guard stream.readAtLeast(count) else { return nil }
        defer { stream.buffer.removeFirst(count) }
        return Array(stream.buffer[..<count])
    }

    /// True once the peer has closed (read returns 0) within `timeout`.
    func waitForEOF(timeout: Double) -> Bool {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var scratch = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &scratch, scratch.count)
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }

    func write(_ string: String) { write(Array(string.utf8)) }

    func write(_ bytes: [UInt8]) {
        stream.write(bytes)
    }

    /// Writes `string` and closes, the bytes and the end in one segment: TCP_CORK holds
    /// the bytes until the close sends them with its FIN, so the client sees both in one
    /// readiness report.
    func writeAndClose(_ string: String) {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size))
        write(string)
        close()
    }

    /// Aborts the connection: SO_LINGER 0 makes close send RST.
    func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }
}

/// The byte at `index` of the test bodies: a pattern that catches lost, duplicated or
/// reordered bytes.
@inline(__always)
func patternByte(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index % 251) }

func patternBody(_ count: Int, from start: Int = 0) -> [UInt8] {
    (start..<(start + count)).map(patternByte)
}
