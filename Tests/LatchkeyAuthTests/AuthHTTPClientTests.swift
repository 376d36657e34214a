import Foundation
import LatchkeyHTTP
import LatchkeyUpstream
import Synchronization
import Testing
@testable import LatchkeyAuth

/// curl_global_init once per process, before the first loop thread uses curl.
let curlReady: Bool = initializeCurlGlobally()

/// A client for one test: curl initialised first, shut down by the test.
func makeClient() throws -> AuthHTTPClient {
    precondition(curlReady)
    return try AuthHTTPClient()
}

/// The client against `LoopbackServer` over real sockets. Serialized: each test runs a
/// loop thread and server threads, and the machine has two cores.
@Suite(.serialized) struct AuthHTTPClientTests {
    @Test func getReturnsStatusFieldsAndBody() async throws {
        let server = try LoopbackServer { request in
            .response(200, [("Content-Type", "text/plain"), ("X-Seen", request.method + " " + request.target)], body: "hello")
        }
        let client = try makeClient()
        defer { client.shutdown() }
        let response = try await client.send(AuthHTTPRequest(method: "GET", url: server.url + "/info?x=1", fields: ["Accept": "text/plain"]))
        #expect(response.status == 200)
        #expect(response.fields["X-Seen"] == "GET /info?x=1")
        #expect(response.mediaType == "text/plain")
        #expect(response.body == Array("hello".utf8))
        #expect(server.requests.first?.field("Accept") == "text/plain")
        #expect(server.requests.first?.field("Content-Length") == nil)
    }

    @Test func postSendsTheBodyAndReturnsAnErrorStatusAsAResponse() async throws {
        let server = try LoopbackServer { request in
            .response(418, body: "\(request.method) \(request.field("Content-Type") ?? "-") \(request.bodyText)")
        }
        let client = try makeClient()
        defer { client.shutdown() }
        let response = try await client.send(AuthHTTPRequest(
            method: "POST", url: server.url + "/token",
            fields: ["Content-Type": "application/x-www-form-urlencoded"], body: Array("a=1&b=2".utf8)
        ))
        #expect(response.status == 418)
        #expect(String(decoding: response.body, as: UTF8.self) == "POST application/x-www-form-urlencoded a=1&b=2")
        #expect(server.requests.first?.field("Content-Length") == "7")
        #expect(server.requests.first?.field("Expect") == nil)
    }

    @Test func bodyOverTheLimitIsAnErrorWhetherAnnouncedOrNot() async throws {
        let big = String(repeating: "x", count: 2 << 20)
        let server = try LoopbackServer { request in
            if request.target == "/announced" { return .response(200, body: big) }
            // Chunked: no length up front, so the limit is found while the body arrives.
            let chunk = String(repeating: "y", count: 4096)
            let chunks = String(repeating: "1000\r\n" + chunk + "\r\n", count: 16) + "0\r\n\r\n"
            return .bytes(Array(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks).utf8))
        }
        let client = try makeClient()
        defer { client.shutdown() }
        let announced = await #expect(throws: AuthHTTPError.self) {
            try await client.send(AuthHTTPRequest(method: "GET", url: server.url + "/announced"))
        }
        #expect(announced?.code == .responseTooLarge)
        let streamed = await #expect(throws: AuthHTTPError.self) {
            try await client.send(AuthHTTPRequest(method: "GET", url: server.url + "/chunked", maxResponseBytes: 10_000))
        }
        #expect(streamed?.code == .responseTooLarge)
        #expect(streamed?.detail.contains("10000") == true)
        // Just under the limit is fine.
        let fits = try await client.send(AuthHTTPRequest(method: "GET", url: server.url + "/chunked", maxResponseBytes: 16 * 4096))
        #expect(fits.body.count == 16 * 4096)
    }

    @Test func refusedConnectionIsConnectFailed() async throws {
        let port = try LoopbackServer.closedPort()
        let client = try makeClient()
        defer { client.shutdown() }
        let error = await #expect(throws: AuthHTTPError.self) {
            try await client.send(AuthHTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/?client_secret=s3cr3t"))
        }
        #expect(error?.code == .connectFailed)
        #expect(error?.description.contains("s3cr3t") == false)
    }

    @Test func silentServerHitsTheTotalTimeout() async throws {
        let server = try LoopbackServer { _ in .silence }
        let client = try makeClient()
        defer { client.shutdown() }
        let started = ContinuousClock.now
        let error = await #expect(throws: AuthHTTPError.self) {
            try await client.send(AuthHTTPRequest(method: "GET", url: server.url, timeout: .milliseconds(300)))
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.code == .timeout)
        #expect(elapsed >= .milliseconds(290) && elapsed < .seconds(5))
        // The transfer was stopped: its connection is closed.
        try await eventually { server.closedByPeer == 1 }
    }

    @Test func cancellingTheTaskStopsTheTransfer() async throws {
        let server = try LoopbackServer { _ in .silence }
        let client = try makeClient()
        defer { client.shutdown() }
        let task = Task { () async throws(AuthHTTPError) -> AuthHTTPResponse in
            try await client.send(AuthHTTPRequest(method: "GET", url: server.url))
        }
        try await eventually { server.requests.count == 1 }
        task.cancel()
        let result = await task.result
        #expect(throws: AuthHTTPError.cancelled) { try result.get() }
        try await eventually { server.closedByPeer == 1 }
    }

    @Test func alreadyCancelledTaskSendsNothing() async throws {
        let server = try LoopbackServer { _ in .response(200) }
        let client = try makeClient()
        defer { client.shutdown() }
        let task = Task { () async throws(AuthHTTPError) -> AuthHTTPResponse in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(AuthHTTPRequest(method: "GET", url: server.url))
        }
        await #expect(throws: AuthHTTPError.cancelled) { try await task.result.get() }
        #expect(server.requests.isEmpty)
    }

    @Test func shutdownFailsWhatIsInFlightAndEverythingAfter() async throws {
        let server = try LoopbackServer { _ in .silence }
        let client = try makeClient()
        let task = Task { () async throws(AuthHTTPError) -> AuthHTTPResponse in
            try await client.send(AuthHTTPRequest(method: "GET", url: server.url))
        }
        try await eventually { server.requests.count == 1 }
        client.shutdown()
        await #expect(throws: AuthHTTPError.shutdown) { try await task.result.get() }
        await #expect(throws: AuthHTTPError.shutdown) {
            try await client.send(AuthHTTPRequest(method: "GET", url: server.url))
        }
        try await eventually { server.closedByPeer == 1 }
    }

    @Test func fiftyConcurrentSends() async throws {
        let server = try LoopbackServer { request in .response(200, body: request.target) }
        let client = try makeClient()
        defer { client.shutdown() }
        let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for i in 0..<50 {
                group.addTask {
                    let response = try await client.send(AuthHTTPRequest(method: "GET", url: server.url + "/\(i)"))
                    return (i, String(decoding: response.body, as: UTF8.self))
                }
            }
            var bodies = [String](repeating: "", count: 50)
            for try await (i, body) in group { bodies[i] = body }
            return bodies
        }
        #expect(bodies == (0..<50).map { "/\($0)" })
    }
}

/// Polls `condition` for up to five seconds: for effects on the server's threads.
func eventually(_ condition: () -> Bool) async throws {
    for _ in 0..<250 where !condition() {
        try await Task.sleep(for: .milliseconds(20))
    }
    #expect(condition())
}
