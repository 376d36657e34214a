import Foundation
import LatchkeyTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 server on 127.0.0.1, port 0: the stub IdP of these tests, in the
/// shape of LatchkeyUpstreamTests' `TestServer`. Each connection runs on a thread of its
/// own and serves requests (Content-Length bodies) until the peer closes; `respond`
/// decides each answer. Every request is recorded for the tests to inspect.
final class LoopbackServer: Sendable {
    enum Reply: Sendable {
        /// Raw bytes, written as they are; the connection stays open for the next request.
        case bytes([UInt8])
        /// Nothing: wait until the peer gives up and closes.
        case silence
    }

    private let listener: LoopbackListener
    private let shared: Shared

    /// What the connection threads and the tests share.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private struct State {
        var requests: [ServerRequest] = []
        /// Connections whose peer has closed them since they were accepted.
        var closedByPeer = 0
    }

    var port: UInt16 { listener.port }
    var url: String { "http://127.0.0.1:\(port)" }
    var requests: [ServerRequest] { shared.state.withLock { $0.requests } }
    var closedByPeer: Int { shared.state.withLock { $0.closedByPeer } }

    init(respond: @escaping @Sendable (ServerRequest) -> Reply) throws {
        let shared = Shared()
        self.shared = shared
        listener = try LoopbackListener { client in
            let connection = ServerConnection(fd: client)
            defer { close(client) }
            while let request = connection.readRequest() {
                shared.state.withLock { $0.requests.append(request) }
                switch respond(request) {
                case .bytes(let bytes):
                    connection.write(bytes)
                case .silence:
                    connection.waitForClose()
                }
            }
            shared.state.withLock { $0.closedByPeer += 1 }
        }
    }

    /// Stops accepting.
    func stop() { listener.stop() }

    /// A loopback port that nothing listens on (free a moment ago).
    static func closedPort() throws -> UInt16 {
        let probe = try LoopbackServer { _ in .silence }
        probe.stop()
        return probe.port
    }
}

extension LoopbackServer.Reply {
    /// A complete response with `Content-Length`.
    static func response(_ status: Int, _ fields: [(String, String)] = [], body: String = "") -> Self {
        let head = ["HTTP/1.1 \(status) Test"] + fields.map { "\($0.0): \($0.1)" } + ["Content-Length: \(body.utf8.count)"]
        return .bytes(Array((head.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8))
    }

    static func json(_ status: Int, _ body: String, _ fields: [(String, String)] = []) -> Self {
        response(status, [("Content-Type", "application/json")] + fields, body: body)
    }
}

/// A request as the server read it off the wire.
struct ServerRequest: Sendable {
    var method: String
    var target: String
    var fields: [(name: String, value: String)]
    var body: [UInt8]

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    func field(_ name: String) -> String? {
        fields.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// One accepted connection, used from its own thread only.
private final class ServerConnection {
    let fd: Int32
    private var stream: SocketStream

    init(fd: Int32) {
        self.fd = fd
        stream = SocketStream(fd: fd)
    }

    /// The next request (head, then a Content-Length body); nil at EOF.
    func readRequest() -> ServerRequest? {
        guard let headEnd = stream.readUntil([13, 10, 13, 10]) else { return nil }
        let lines = String(decoding: stream.buffer[..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        stream.buffer.removeFirst(headEnd + 4)
        let requestLine = lines[0].split(separator: " ")
        let fields = lines.dropFirst().map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            let value = colon < line.endIndex ? line[line.index(after: colon)...] : ""
            return (String(line[..<colon]), value.trimmingCharacters(in: .whitespaces))
        }
        var request = ServerRequest(
            method: String(requestLine.first ?? ""), target: String(requestLine.dropFirst().first ?? ""),
            fields: fields, body: []
        )
        let length = request.field("Content-Length").flatMap { Int($0) } ?? 0
        guard stream.readAtLeast(length) else { return nil }
        request.body = Array(stream.buffer[..<length])
        stream.buffer.removeFirst(length)
        return request
    }

    func write(_ bytes: [UInt8]) {
        stream.write(bytes)
    }

    func waitForClose() {
        while stream.readMore() {}
    }
}
