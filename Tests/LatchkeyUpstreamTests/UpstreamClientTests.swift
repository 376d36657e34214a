import Foundation
import LatchkeyHTTP
import LatchkeyLoop
import Synchronization
import Testing
@testable import LatchkeyUpstream

/// End-to-end against `TestServer` over loopback, one loop thread per test. Serialized:
/// curl_global_init is process-wide, and the machine has two cores.
@Suite(.serialized) struct UpstreamClientTests {
    /// Echoes the request head as the response body, with a few response fields that
    /// must come back exactly as sent.
    @Test func getSendsTheFieldsAsGivenAndReturnsTheHeadAsSent() async throws {
        let server = try TestServer { connection in
            guard let received = connection.readRequest() else { return }
            let body = received.head
            connection.write(
                "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nX-Multi: a\r\nSet-Cookie: s=1\r\n"
                    + "X-Multi: b\r\nSet-Cookie: t=2; Path=/\r\nX-Spaced:   padded  \r\n\r\n" + body)
        }
        let harness = try UpstreamHarness()
        let fields: HTTPFields = [
            "Host": "upstream.test", "X-First": "1", "Authorization": "Bearer secret",
            "X-Empty": "", "X-Last": "z",
        ]
        let outcome = await harness.perform(request("GET", server.baseURL + "/path/../x?q=1&api_key=k", fields: fields))
        await harness.shutDown()

        #expect(outcome.error == nil)
        #expect(outcome.status == 200)
        let lines = outcome.bodyText.components(separatedBy: "\r\n")
        #expect(lines.first == "GET /path/../x?q=1&api_key=k HTTP/1.1")
        let sent = Array(lines.dropFirst())
        #expect(sent == ["Host: upstream.test", "X-First: 1", "Authorization: Bearer secret", "X-Empty:", "X-Last: z"])
        #expect(!sent.contains { $0.lowercased().hasPrefix("accept") || $0.lowercased().hasPrefix("expect") })
        let names = outcome.fields.map { $0.map(\.name) } ?? []
        #expect(names == ["Content-Length", "X-Multi", "Set-Cookie", "X-Multi", "Set-Cookie", "X-Spaced"])
        #expect(outcome.fields?.values(named: "x-multi") == ["a", "b"])
        #expect(outcome.fields?.values(named: "Set-Cookie") == ["s=1", "t=2; Path=/"])
        #expect(outcome.fields?["X-Spaced"] == "padded")
        #expect(outcome.finishCount == 1)
    }

    @Test func callerAcceptReplacesCurlsDefault() async throws {
        let server = try TestServer { connection in
            guard let received = connection.readRequest() else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(received.head.utf8.count)\r\n\r\n" + received.head)
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "h", "Accept": "text/plain"]))
        await harness.shutDown()
        let lines = outcome.bodyText.components(separatedBy: "\r\n")
        #expect(lines.filter { $0.lowercased().hasPrefix("accept") } == ["Accept: text/plain"])
    }

    @Test(arguments: [false, true])
    func postBodyStreamsInPieces(chunked: Bool) async throws {
        let server = try TestServer { connection in
            guard let received = connection.readRequest() else { return }
            let framing = "X-Method: \(received.method)\r\nX-CL: \(received.values("content-length").joined(separator: ","))\r\n"
                + "X-TE: \(received.values("transfer-encoding").joined(separator: ","))\r\n"
                + "X-Expect: \(received.values("expect").joined(separator: ","))\r\n"
            connection.write("HTTP/1.1 201 Created\r\n\(framing)Content-Length: \(received.body.count)\r\n\r\n")
            connection.write(received.body)
        }
        let harness = try UpstreamHarness()
        let pieces = [patternBody(10), patternBody(70_000, from: 10), patternBody(1, from: 70_010), patternBody(5000, from: 70_011)]
        let total = pieces.reduce(0) { $0 + $1.count }
        let outcome = await harness.perform(
            request("POST", server.baseURL + "/upload", fields: ["Host": "h"], body: chunked ? .streaming : .length(UInt64(total))),
            started: { transfer, _, loop in
                for (i, piece) in pieces.enumerated() {
                    after(.milliseconds(15 * (i + 1)), on: loop) {
                        piece.withUnsafeBytes { transfer.sendBody($0) }
                        if i == pieces.count - 1 { transfer.finishBody() }
                    }
                }
            }
        )
        await harness.shutDown()

        #expect(outcome.error == nil)
        #expect(outcome.status == 201)
        #expect(outcome.fields?["X-Method"] == "POST")
        #expect(outcome.fields?["X-CL"] == (chunked ? "" : "\(total)"))
        #expect(outcome.fields?["X-TE"] == (chunked ? "chunked" : ""))
        #expect(outcome.fields?["X-Expect"] == "")
        #expect(outcome.body == patternBody(total))
        #expect(outcome.wantsBodyCount >= 1)
    }

    @Test func putBodyGivenUpFrontIsSentWhole() async throws {
        let server = try TestServer { connection in
            guard let received = connection.readRequest() else { return }
            connection.write("HTTP/1.1 200 OK\r\nX-Method: \(received.method)\r\nContent-Length: \(received.body.count)\r\n\r\n")
            connection.write(received.body)
        }
        let harness = try UpstreamHarness()
        let body = patternBody(300_000)
        let outcome = await harness.perform(
            request("PATCH", server.baseURL, fields: ["Host": "h"], body: .length(UInt64(body.count))),
            started: { transfer, _, _ in
                body.withUnsafeBytes { transfer.sendBody($0) }
                #expect(transfer.queuedBodyBytes == body.count)
                transfer.finishBody()
            }
        )
        await harness.shutDown()
        #expect(outcome.error == nil)
        #expect(outcome.fields?["X-Method"] == "PATCH")
        #expect(outcome.body == body)
    }

    @Test func headReportsTheHeadAndNoBody() async throws {
        let server = try TestServer { connection in
            guard let received = connection.readRequest() else { return }
            connection.write("HTTP/1.1 200 OK\r\nX-Method: \(received.method)\r\nContent-Length: 1234\r\n\r\n")
            _ = connection.waitForEOF(timeout: 5)
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request("HEAD", server.baseURL, fields: ["Host": "h"]))
        await harness.shutDown()
        #expect(outcome.error == nil)
        #expect(outcome.status == 200)
        #expect(outcome.fields?["X-Method"] == "HEAD")
        #expect(outcome.fields?["Content-Length"] == "1234")
        #expect(outcome.body.isEmpty)
    }

    @Test func noContentFinishesWithoutBody() async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n")
            _ = connection.waitForEOF(timeout: 5)
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request("DELETE", server.baseURL + "/item/1", fields: ["Host": "h"]))
        await harness.shutDown()
        #expect(outcome.error == nil)
        #expect(outcome.status == 204)
        #expect(outcome.body.isEmpty)
    }

    @Test func interimResponsesAreNotTheHead() async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n")
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Final: yes\r\n\r\nok")
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "h"]))
        await harness.shutDown()
        #expect(outcome.error == nil)
        #expect(outcome.status == 200)
        #expect(outcome.fields.map { $0.map(\.name) } == ["Content-Length", "X-Final"])
        #expect(outcome.bodyText == "ok")
    }

    @Test func malformedResponseHeadIsReported() async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nGood: 1\r\n folded\r\nContent-Length: 0\r\n\r\n")
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "h"]))
        await harness.shutDown()
        #expect(outcome.status == nil)
        #expect(outcome.error == UpstreamError(.other, detail: "malformed response head line"))
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let server = try TestServer { connection in
            while let received = connection.readRequest() {
                let body = received.requestLine
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
            }
        }
        let harness = try UpstreamHarness()
        let first = await harness.perform(request(server.baseURL + "/1", fields: ["Host": "h"]))
        let operationsBefore = await harness.onLoop { client, _ in client.events.epollOperations }
        let second = await harness.perform(request(server.baseURL + "/2", fields: ["Host": "h"]))
        let third = await harness.perform(request("POST", server.baseURL + "/3", fields: ["Host": "h"], body: .length(0)))
        let operationsAfter = await harness.onLoop { client, _ in client.events.epollOperations }
        await harness.shutDown()
        #expect(first.bodyText == "GET /1 HTTP/1.1")
        #expect(second.bodyText == "GET /2 HTTP/1.1")
        #expect(third.bodyText == "POST /3 HTTP/1.1")
        #expect(server.acceptCount == 1)
        // A reused connection keeps its epoll registration: no re-registration churn.
        #expect(operationsAfter - operationsBefore == 0, "epoll_ctl calls for two reused requests: \(operationsAfter - operationsBefore)")
    }

    /// curl's sockets are remembered from their opening to their close, and only then: the
    /// table does not grow with the descriptor numbers the client connections push them to.
    @Test(arguments: [UpstreamPath.curl, .http1])
    func aSocketIsForgottenOnceCurlClosesIt(path: UpstreamPath) async throws {
        let server = try TestServer { connection in
            while let received = connection.readRequest() {
                let closes = received.requestLine.contains("/close")
                connection.write("HTTP/1.1 200 OK\r\n\(closes ? "Connection: close\r\n" : "")Content-Length: 2\r\n\r\nok")
                if closes { return }
            }
        }
        let harness = try UpstreamHarness()
        let kept = await harness.perform(request(server.baseURL + "/keep", fields: ["Host": "h"]), on: path)
        let socketsWhileKept = await harness.onLoop { client, _ in client.events.socketCount }
        let closed = await harness.perform(request(server.baseURL + "/close", fields: ["Host": "h"]), on: path)
        let socketsAfterClose = await harness.onLoop { client, _ in client.events.socketCount }
        await harness.shutDown()
        #expect(kept.bodyText == "ok" && closed.bodyText == "ok")
        #expect(server.acceptCount == 1)
        #expect(socketsWhileKept == 1)
        #expect(socketsAfterClose == 0)
    }

    @Test(arguments: [false, true])
    func backpressureDeliversEveryByteInOrder(chunked: Bool) async throws {
        let size = 6 * 1024 * 1024
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            let body = patternBody(size)
            if chunked {
                connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                var offset = 0
                while offset < size {
                    let n = min(100_000, size - offset)
                    connection.write(Array(String(n, radix: 16).utf8) + [13, 10] + Array(body[offset..<(offset + n)]) + [13, 10])
                    offset += n
                }
                connection.write("0\r\n\r\n")
            } else {
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n")
                connection.write(body)
            }
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "h"])) { recorder, loop in
            var sinceResume = 0
            recorder.onBody = { transfer, recorder in
                sinceResume += 1
                guard sinceResume >= 3 else { return true }
                sinceResume = 0
                // Pretend the client's socket is full; drain it a little later.
                after(.milliseconds(2), on: loop) { transfer.resumeReceiving() }
                return false
            }
        }
        await harness.shutDown()
        #expect(outcome.error == nil)
        #expect(outcome.pauseCount > 10)
        #expect(outcome.body.count == size)
        #expect(outcome.body == patternBody(size))
    }

    @Test func slowChunkedResponseArrivesAsItIsSent() async throws {
        let firstSeen = Mutex(false)
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")
            // The second chunk goes out only once the client has seen the first.
            let deadline = Date().addingTimeInterval(5)
            while !firstSeen.withLock({ $0 }) && Date() < deadline { usleep(2000) }
            connection.write("6\r\nsecond\r\n0\r\n\r\n")
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "h"])) { recorder, _ in
            recorder.onBody = { _, recorder in
                if recorder.body == Array("first".utf8) { firstSeen.withLock { $0 = true } }
                return true
            }
        }
        await harness.shutDown()
        #expect(firstSeen.withLock { $0 })
        #expect(outcome.error == nil)
        #expect(outcome.bodyText == "firstsecond")
    }

    @Test func resetMidBodyIsReceiveFailed() async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            connection.write(patternBody(1000))
            usleep(50_000)
            connection.reset()
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "h"]))
        let active = await harness.onLoop { client, _ in client.activeTransfers }
        await harness.shutDown()
        #expect(outcome.status == 200)
        #expect(outcome.body == patternBody(1000))
        #expect(outcome.error?.code == .receiveFailed)
        #expect(outcome.error?.isTimeout == false)
        #expect(active == 0)
    }

    @Test func truncatedBodyIsReceiveFailed() async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            connection.write(patternBody(10))
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "h"]))
        await harness.shutDown()
        #expect(outcome.error?.code == .receiveFailed)
    }

    @Test func refusedConnectionIsConnectFailed() async throws {
        // A port that was free a moment ago: bind, read it back, close.
        let closedPort: UInt16 = try {
            let probe = try TestServer { _ in }
            defer { probe.stop() }
            return probe.port
        }()
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request("http://127.0.0.1:\(closedPort)/?api_key=secret", fields: ["Host": "h"]))
        await harness.shutDown()
        #expect(outcome.error?.code == .connectFailed)
        #expect(outcome.status == nil)
        #expect(outcome.error?.detail.contains("secret") == false)
    }

    @Test func unresolvableHostIsResolveFailed() async throws {
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request("http://nonexistent.invalid/", fields: ["Host": "h"]))
        await harness.shutDown()
        #expect(outcome.error?.code == .resolveFailed)
    }

    // The timeouts on both paths: libcurl's handle timers, and the one timer of Latchkey's
    // own exchange at the earlier of its deadlines (`ExchangeDeadlines`).
    @Test(arguments: [UpstreamPath.curl, .http1])
    func silentUpstreamIsFirstByteTimeout(path: UpstreamPath) async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            _ = connection.waitForEOF(timeout: 5)
        }
        let harness = try UpstreamHarness()
        let started = ContinuousClock.now
        let options = UpstreamOptions(firstByteTimeout: .milliseconds(200), idleTimeout: .milliseconds(50))
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "h"], options: options), on: path)
        let elapsed = ContinuousClock.now - started
        await harness.shutDown()
        #expect(outcome.error?.code == .firstByteTimeout)
        #expect(outcome.error?.isTimeout == true)
        #expect(elapsed >= .milliseconds(190) && elapsed < .seconds(3))
    }

    /// curl asks for no more of a sized body after its last byte: the request is sent then,
    /// and the first-byte timeout, not the idle one, applies to the wait for the head.
    @Test(arguments: [UpstreamPath.curl, .http1])
    func silentUpstreamAfterASizedBodyIsFirstByteTimeout(path: UpstreamPath) async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            _ = connection.waitForEOF(timeout: 5)
        }
        let harness = try UpstreamHarness()
        let options = UpstreamOptions(firstByteTimeout: .milliseconds(300), idleTimeout: .milliseconds(50))
        let outcome = await harness.perform(
            request("POST", server.baseURL, fields: ["Host": "h"], body: .length(5), options: options), on: path,
            started: { transfer, _, _ in
                Array("hello".utf8).withUnsafeBytes { transfer.sendBody($0) }
                transfer.finishBody()
            }
        )
        await harness.shutDown()
        #expect(outcome.error?.code == .firstByteTimeout)
    }

    @Test(arguments: [UpstreamPath.curl, .http1])
    func stalledBodyIsIdleTimeout(path: UpstreamPath) async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc")
            _ = connection.waitForEOF(timeout: 5)
        }
        let harness = try UpstreamHarness()
        let options = UpstreamOptions(firstByteTimeout: .seconds(5), idleTimeout: .milliseconds(200))
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "h"], options: options), on: path)
        await harness.shutDown()
        #expect(outcome.status == 200)
        #expect(outcome.bodyText == "abc")
        #expect(outcome.error?.code == .idleTimeout)
    }

    @Test(arguments: [UpstreamPath.curl, .http1])
    func slowClientBodyIsNotAnIdleTimeout(path: UpstreamPath) async throws {
        let server = try TestServer { connection in
            guard let received = connection.readRequest() else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(received.body.count)\r\n\r\n")
            connection.write(received.body)
        }
        let harness = try UpstreamHarness()
        let options = UpstreamOptions(idleTimeout: .milliseconds(100))
        let outcome = await harness.perform(
            request("POST", server.baseURL, fields: ["Host": "h"], body: .streaming, options: options), on: path,
            started: { transfer, _, loop in
                // The client takes longer than the idle timeout to send its body.
                after(.milliseconds(350), on: loop) {
                    Array("late".utf8).withUnsafeBytes { transfer.sendBody($0) }
                    transfer.finishBody()
                }
            }
        )
        await harness.shutDown()
        #expect(outcome.error == nil)
        #expect(outcome.bodyText == "late")
    }

    @Test(arguments: [false, true])
    func cancelFreesTheTransferAndClosesTheConnection(insideCallback: Bool) async throws {
        let sawEOF = Mutex<Bool?>(nil)
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nxyz")
            sawEOF.withLock { $0 = connection.waitForEOF(timeout: 5) }
        }
        let harness = try UpstreamHarness()
        final class Probe: @unchecked Sendable {
            weak var transfer: UpstreamTransfer?
            weak var recorder: Recorder?
            var finishCount = -1
            var upstreamTime: Duration?
        }
        let probe = Probe()
        await harness.awaitOnLoop(fallback: ()) { client, loop, finished in
            let recorder = Recorder { _ in Issue.record("upstreamDidFinish after cancel") }
            probe.recorder = recorder
            recorder.onBody = { transfer, recorder in
                let done = {
                    transfer.cancel()
                    probe.upstreamTime = transfer.upstreamTime
                    // Deferred release (inside a callback) runs after this batch of events.
                    after(.milliseconds(50), on: loop) {
                        probe.finishCount = recorder.finishCount
                        finished(())
                    }
                }
                if insideCallback {
                    done()
                } else {
                    after(.milliseconds(10), on: loop, done)
                }
                return true
            }
            let transfer = client.start(request(server.baseURL, fields: ["Host": "h"]), delegate: recorder)
            probe.transfer = transfer
        }
        let active = await harness.onLoop { client, _ in client.activeTransfers }
        let leaked = await harness.onLoop { _, _ in probe.transfer != nil || probe.recorder != nil }
        await harness.shutDown()
        #expect(active == 0)
        #expect(!leaked)
        #expect(probe.finishCount == 0)
        #expect(probe.upstreamTime != nil)
        for _ in 0..<100 where sawEOF.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(sawEOF.withLock { $0 } == true)
    }

    /// The 401 → refresh → replay shape: from inside the first response's head callback the
    /// caller cancels it and starts the replay (curl refuses add_handle there: deferred).
    @Test func replayStartedFromInsideAHeadCallback() async throws {
        let server = try TestServer { connection in
            while let received = connection.readRequest() {
                if received.requestLine.hasPrefix("GET /first") {
                    connection.write("HTTP/1.1 401 Unauthorized\r\nContent-Length: 100000\r\n\r\npartial")
                    return
                }
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nreplay")
            }
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.awaitOnLoop(fallback: Outcome.watchdog) { client, _, finished in
            let first = Recorder { _ in Issue.record("cancelled transfer finished") }
            first.onHead = { transfer, _ in
                transfer.cancel()
                let replay = Recorder(finished: finished)
                _ = client.start(request(server.baseURL + "/second", fields: ["Host": "h"]), delegate: replay)
            }
            _ = client.start(request(server.baseURL + "/first", fields: ["Host": "h"]), delegate: first)
        }
        let active = await harness.onLoop { client, _ in client.activeTransfers }
        await harness.shutDown()
        #expect(outcome.error == nil)
        #expect(outcome.bodyText == "replay")
        #expect(active == 0)
    }

    /// Releasing the client with transfers in flight abandons them silently and closes
    /// their connections.
    @Test func releasingTheClientAbandonsActiveTransfers() async throws {
        let sawEOF = Mutex<Bool?>(nil)
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nxyz")
            sawEOF.withLock { $0 = connection.waitForEOF(timeout: 5) }
        }
        let harness = try UpstreamHarness()
        await harness.awaitOnLoop(fallback: ()) { client, _, finished in
            let recorder = Recorder { _ in Issue.record("abandoned transfer finished") }
            recorder.onBody = { _, _ in
                finished(())
                return true
            }
            _ = client.start(request(server.baseURL, fields: ["Host": "h"]), delegate: recorder)
        }
        await harness.shutDown()
        for _ in 0..<100 where sawEOF.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(sawEOF.withLock { $0 } == true)
    }

    @Test func manyConcurrentTransfers() async throws {
        let server = try TestServer { connection in
            while let received = connection.readRequest() {
                let body = received.requestLine
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
            }
        }
        let harness = try UpstreamHarness()
        let count = 40
        let results = await harness.awaitOnLoop(fallback: [String]()) { client, _, finished in
            var results = [String](repeating: "", count: count)
            var remaining = count
            for i in 0..<count {
                let recorder = Recorder { outcome in
                    results[i] = outcome.error == nil ? outcome.bodyText : "\(outcome.error!)"
                    remaining -= 1
                    if remaining == 0 { finished(results) }
                }
                _ = client.start(request(server.baseURL + "/\(i)", fields: ["Host": "h"]), delegate: recorder)
            }
        }
        await harness.shutDown()
        #expect(results == (0..<count).map { "GET /\($0) HTTP/1.1" })
    }
}
