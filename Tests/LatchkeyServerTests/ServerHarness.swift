import Foundation
import LatchkeyHTTP
import LatchkeyLoop
import LatchkeyTestSupport
@testable import LatchkeyServer
import LatchkeyTLS
import Synchronization

/// An `HTTPServer` on a loop thread of its own, listening on 127.0.0.1 port 0, answering
/// with `EchoHandler`: no proxy, so the tests see only the server's behaviour.
final class ServerHarness: Sendable {
    let listener: ListeningSocket
    let thread: EventLoopThread
    let connectionEvents = ConnectionEventLog()
    let handshakes = HandshakeLog()
    let loopCPUClock = ThreadCPUClock()

    /// `connectionCount`: shared with other harnesses to stand for a process's other loops.
    /// `tls`: a TLS listener.
    init(settings: ConnectionSettings = .init(), connectionCount: ConnectionCount = ConnectionCount(), tls: ListenerTLS? = nil) throws {
        // OpenSSL writes to the socket with write(2): a client gone must not kill the
        // test process (the server's process ignores SIGPIPE likewise).
        if tls != nil { signal(SIGPIPE, SIG_IGN) }
        let listener = try ListeningSocket(address: .ipv4(host: "127.0.0.1", port: 0), index: 0, tls: tls)
        self.listener = listener
        let connectionEvents = self.connectionEvents
        let handshakes = self.handshakes
        let loopCPUClock = self.loopCPUClock
        thread = try EventLoopThread(index: 0) { loop in
            loopCPUClock.setToCurrentThread()
            let handler = EchoServerHandler(loop: loop, connectionEvents: connectionEvents, handshakes: handshakes)
            let server = HTTPServer(loop: loop, settings: settings, handler: handler, connectionCount: connectionCount)
            try server.listen(on: listener)
            loop.attach(handler)
            loop.attach(server)
        }
    }

    var port: Int { listener.info.boundAddress.port! }

    /// The CPU time the loop's thread has used so far.
    var loopCPUTime: Duration { loopCPUClock.elapsed }

    /// Runs `body` with the server on its loop and waits for its answer.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (HTTPServer) -> T) -> T {
        let answer = LoopAnswer<T>()
        let done = DispatchSemaphore(value: 0)
        thread.handle.execute { loop in
            answer.value.withLock { $0 = body(loop.attachment(HTTPServer.self)!) }
            done.signal()
        }
        done.wait()
        return answer.value.withLock { $0! }
    }

    /// Runs `body` while the loop's thread is held: whatever `body` sends waits in the
    /// sockets, reported to the loop together once it goes on.
    func whileLoopIsHeld(_ body: () -> Void) {
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        thread.handle.execute { _ in
            held.signal()
            release.wait()
        }
        held.wait()
        body()
        release.signal()
    }

    /// Graceful shutdown, as the process begins it.
    func drain() {
        thread.handle.execute { loop in loop.attachment(HTTPServer.self)?.drain {} }
    }

    deinit {
        thread.handle.execute { loop in
            loop.attachment(HTTPServer.self)?.closeAll()
            loop.stop()
        }
        thread.join()
    }
}

/// Answers every request once its body has arrived: `METHOD TARGET bytes=N` (and, over
/// TLS, ` tls=VERSION subject=SUBJECT`). The body is asked for at once, so
/// `Expect: 100-continue` gets its interim response. `/big/N` answers N bytes, sent as
/// backpressure allows; `/cut/N` announces twice N bytes, sends N and aborts (an upstream
/// that failed mid-body); `/paused-upload` pauses the body after every piece and resumes it
/// a millisecond later; `/later` answers 50 ms after its head, as a proxied request does.
final class EchoServerHandler: ServerHandler {
    let loop: EventLoop
    let connectionEvents: ConnectionEventLog
    let handshakes: HandshakeLog

    init(loop: EventLoop, connectionEvents: ConnectionEventLog, handshakes: HandshakeLog) {
        self.loop = loop
        self.connectionEvents = connectionEvents
        self.handshakes = handshakes
    }

    func handle(_ exchange: ServerExchange) -> ExchangeHandler {
        if exchange.head.target.hasPrefix("/big/"), let size = Int(exchange.head.target.dropFirst(5)) {
            return BigResponse(exchange, size: size)
        }
        if exchange.head.target.hasPrefix("/cut/"), let size = Int(exchange.head.target.dropFirst(5)) {
            exchange.sendHead(status: 200, fields: ["Content-Length": String(2 * size)])
            [UInt8](repeating: UInt8(ascii: "x"), count: size).withUnsafeBytes { _ = exchange.sendBody($0) }
            exchange.abort()
            return BigResponse(exchange, size: 0)
        }
        if exchange.head.target == "/later" { return LaterAnswer(exchange, loop: loop) }
        let echo = EchoExchange(exchange, pausingIn: exchange.head.target == "/paused-upload" ? loop : nil)
        exchange.resumeRequestBody()
        return echo
    }

    func serverAnswered(_ exchange: ServerExchange) {}

    func connection(_ event: ConnectionEvent, on listener: ListenerInfo) {
        connectionEvents.append(event)
    }

    func tlsHandshake(_ outcome: TLSHandshakeOutcome, on listener: ListenerInfo, peer: SocketAddress?, tunnel: TargetAuthority?) {
        handshakes.append(outcome)
    }
}

/// The handshakes the server reported, in order; read by the test's thread.
final class HandshakeLog: Sendable {
    private let outcomes = Mutex<[TLSHandshakeOutcome]>([])

    func append(_ outcome: TLSHandshakeOutcome) {
        outcomes.withLock { $0.append(outcome) }
    }

    var all: [TLSHandshakeOutcome] { outcomes.withLock { $0 } }

    /// Waits up to 5 s for the `count`th outcome.
    func waitFor(_ count: Int = 1) -> [TLSHandshakeOutcome] {
        let deadline = ContinuousClock.now + .seconds(5)
        while outcomes.withLock({ $0.count }) < count && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        return outcomes.withLock { $0 }
    }
}

/// The CPU-time clock of one thread, set on that thread, read on any.
final class ThreadCPUClock: Sendable {
    private let clock = Mutex<clockid_t>(0)

    func setToCurrentThread() {
        clock.withLock { _ = pthread_getcpuclockid(pthread_self(), &$0) }
    }

    var elapsed: Duration {
        var time = timespec()
        clock_gettime(clock.withLock { $0 }, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
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
    /// Pauses the body after every piece, resuming on this loop shortly after.
    let pausingLoop: EventLoop?
    private lazy var resume = ClosureTimer { [unowned self] in self.exchange.resumeRequestBody() }

    init(_ exchange: ServerExchange, pausingIn loop: EventLoop? = nil) {
        self.exchange = exchange
        pausingLoop = loop
    }

    func requestBody(_ bytes: UnsafeRawBufferPointer) {
        received += bytes.count
        guard let pausingLoop else { return }
        exchange.pauseRequestBody()
        pausingLoop.arm(resume, after: .milliseconds(1))
    }

    func requestBodyEnded() {
        var text = "\(exchange.head.method) \(exchange.head.target) bytes=\(received)"
        if let tls = exchange.tls { text += " tls=\(tls.protocolVersion) subject=\(tls.clientSubject ?? "none")" }
        exchange.respond(status: 200, fields: ["Content-Type": "text/plain"], body: Array(text.utf8))
    }

    func responseDrained() {}
    func exchangeAborted(_ reason: ExchangeEnd) {}
}

/// Answers "later" 50 ms after the head, from a timer: nothing happens on the connection
/// in between.
final class LaterAnswer: ExchangeHandler {
    let exchange: ServerExchange
    private lazy var answer = ClosureTimer { [unowned self] in
        self.exchange.respond(status: 200, fields: ["Content-Type": "text/plain"], body: Array("later".utf8))
    }

    init(_ exchange: ServerExchange, loop: EventLoop) {
        self.exchange = exchange
        loop.arm(answer, after: .milliseconds(50))
    }

    func requestBody(_ bytes: UnsafeRawBufferPointer) {}
    func requestBodyEnded() {}
    func responseDrained() {}
    func exchangeAborted(_ reason: ExchangeEnd) {}
}

/// Answers `size` bytes of "x", 64 KiB at a time while the server's buffer takes them.
final class BigResponse: ExchangeHandler {
    let exchange: ServerExchange
    var remaining: Int
    static let piece = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)

    init(_ exchange: ServerExchange, size: Int) {
        self.exchange = exchange
        remaining = size
        exchange.sendHead(status: 200, fields: ["Content-Length": String(size)])
        send()
    }

    func send() {
        while remaining > 0 {
            let count = min(remaining, Self.piece.count)
            remaining -= count
            let more = Self.piece[..<count].withUnsafeBytes { exchange.sendBody($0) }
            if !more { return }
        }
        exchange.finish()
    }

    func requestBody(_ bytes: UnsafeRawBufferPointer) {}
    func requestBodyEnded() {}
    func responseDrained() { send() }
    func exchangeAborted(_ reason: ExchangeEnd) {}
}

/// What `ServerHarness.onLoop` brings back from the loop's thread.
private final class LoopAnswer<T: Sendable>: Sendable {
    let value = Mutex<T?>(nil)
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

    /// Sends `text` and the end of the client's sending in one segment: TCP_CORK holds the
    /// bytes until the half close sends them with its FIN, so the server sees both in one
    /// readiness report.
    func sendThenFinish(_ text: String) {
        var on: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size))
        send(text)
        shutdown(fd, Int32(SHUT_WR))
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
