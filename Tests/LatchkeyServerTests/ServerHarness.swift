import Foundation
import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyTestSupport
@testable import LatchkeyServer
import Synchronization

/// An `HTTPServer` on a loop thread of its own, listening on 127.0.0.1 port 0, answering
/// with `EchoHandler`: no proxy, so the tests see only the server's behaviour.
final class ServerHarness: Sendable {
    let listener: ListeningSocket
    let thread: EventLoopThread
    let connectionEvents = ConnectionEventLog()

    /// `connectionCount`: shared with other harnesses to stand for a process's other loops.
    init(settings: ConnectionSettings = .init(), connectionCount: ConnectionCount = ConnectionCount()) throws {
        let listener = try ListeningSocket(address: .ipv4(host: "127.0.0.1", port: 0), index: 0)
        self.listener = listener
        let connectionEvents = self.connectionEvents
        thread = try EventLoopThread(index: 0) { loop in
            let handler = EchoServerHandler(connectionEvents: connectionEvents)
            let server = HTTPServer(loop: loop, settings: settings, handler: handler, connectionCount: connectionCount)
            try server.listen(on: listener)
            loop.attach(handler)
            loop.attach(server)
        }
    }

    var port: Int { listener.info.boundAddress.port! }

    deinit {
        thread.handle.execute { loop in
            loop.attachment(HTTPServer.self)?.closeAll()
            loop.stop()
        }
        thread.join()
    }
}

/// Answers every request once its body has arrived: `METHOD TARGET bytes=N`. The body is
/// asked for at once, so `Expect: 100-continue` gets its interim response.
final class EchoServerHandler: ServerHandler {
    let connectionEvents: ConnectionEventLog

    init(connectionEvents: ConnectionEventLog) {
        self.connectionEvents = connectionEvents
    }

    func handle(_ exchange: ServerExchange) -> ExchangeHandler {
        let echo = EchoExchange(exchange)
        exchange.resumeRequestBody()
        return echo
    }

    func serverAnswered(_ exchange: ServerExchange) {}

    func connection(_ event: ConnectionEvent, on listener: ListenerInfo) {
        connectionEvents.append(event)
    }
}

/// What the server told the handler about its connections, in order; read by the test's
/// thread while the loop's thread appends.
final class ConnectionEventLog: Sendable {
    private let events = Mutex<[ConnectionEvent]>([])

    func append(_ event: ConnectionEvent) {
        events.withLock { $0.append(event) }
    }

    var all: [ConnectionEvent] { events.withLock { $0 } }
}

final class EchoExchange: ExchangeHandler {
    let exchange: ServerExchange
    var received = 0

    init(_ exchange: ServerExchange) {
        self.exchange = exchange
    }

    func requestBody(_ bytes: UnsafeRawBufferPointer) {
        received += bytes.count
    }

    func requestBodyEnded() {
        let text = "\(exchange.head.method) \(exchange.head.target) bytes=\(received)"
        exchange.respond(status: 200, fields: ["Content-Type": "text/plain"], body: Array(text.utf8))
    }

    func responseDrained() {}
    func exchangeAborted(_ reason: ExchangeEnd) {}
}

/// A blocking client socket with a receive timeout, for the tests' side of the wire.
final class TestClient {
    let fd: Int32

    init(port: Int) throws {
        fd = try LoopbackClient.connect(port: UInt16(port), receiveTimeout: 5)
    }

    deinit {
        close(fd)
    }

    func send(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until `text` holds `count` occurrences of `marker`, the peer closes, or the
    /// receive timeout passes.
    func read(until marker: String, count: Int = 1) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while String(decoding: received, as: UTF8.self).components(separatedBy: marker).count - 1 < count {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// True when the peer has closed the connection (read returns 0 or a reset).
    func peerClosed() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) <= 0
    }
}
