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

    let port: UInt16
    private let listenFD: Int32
    private let shared = Shared()

    /// What the connection threads and the tests share.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private struct State {
        var requests: [ServerRequest] = []
        var stopped = false
        /// Connections whose peer has closed them since they were accepted.
        var closedByPeer = 0
    }

    var url: String { "http://127.0.0.1:\(port)" }
    var requests: [ServerRequest] { shared.state.withLock { $0.requests } }
    var closedByPeer: Int { shared.state.withLock { $0.closedByPeer } }

    init(respond: @escaping @Sendable (ServerRequest) -> Reply) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard fd >= 0, bound == 0, listen(fd, 128) == 0 else {
            close(fd)
            throw LoopbackServerError.socket(errno)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        port = UInt16(bigEndian: address.sin_port)
        let shared = self.shared
        Thread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    // Stopped: only now is the fd number free for reuse.
                    close(fd)
                    return
                }
                Thread {
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
                }.start()
            }
        }.start()
    }

    /// Stops accepting: shutdown(2) refuses new connections and wakes the blocked accept,
    /// whose thread then closes the fd. Closing it here instead would let a later server
    /// reuse the number while that thread could still call accept on it, and serve the
    /// later server's connections with this one's answers.
    func stop() {
        let first = shared.state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        shutdown(listenFD, Int32(SHUT_RDWR))
    }

    deinit { stop() }

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

enum LoopbackServerError: Error {
    case socket(Int32)
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
