import Foundation
import LatchkeyTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A user agent that speaks raw HTTP/1.1 to a loopback port, blocking: it sends a request
/// and reads the answer until the server closes the connection. Every read gives up after
/// ten seconds, so that a server that never answers fails the test instead of hanging it.
enum ScriptedBrowser {
    struct Answer {
        var status: Int
        var text: String
    }

    static func get(_ target: String, port: UInt16, method: String = "GET") async throws -> Answer {
        try await send("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: scripted\r\n\r\n", port: port)
    }

    /// On a thread of its own: blocking Swift's cooperative pool (two threads here) could
    /// starve the task that starts the server under test.
    static func send(_ request: String, port: UInt16) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try exchange(request, port: port) }) }.start()
        }
    }

    private static func exchange(_ request: String, port: UInt16) throws -> Answer {
        let fd = try LoopbackClient.connect(port: port)
        defer { close(fd) }
        var stream = SocketStream(fd: fd)
        stream.write(Array(request.utf8))
        while stream.readMore() {}
        let text = String(decoding: stream.buffer, as: UTF8.self)
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        return Answer(status: status, text: text)
    }
}
