import LatchkeyHTTP
import LatchkeyLoop
import Synchronization
import Testing
@testable import LatchkeyUpstream

/// Latchkey's own HTTP/1.1 exchanges against `TestServer` over loopback: the request as
/// written, keep-alive through the pool, bodies both ways, failures. Serialized, as
/// `UpstreamClientTests`.
@Suite(.serialized) struct HTTP1TransferTests {
    /// Answers every request on a connection with its head as the body, until the client
    /// closes.
    static func echoingHeads() throws -> TestServer {
        try TestServer { connection in
            while let received = connection.readRequest() {
                let body = received.head + "|" + String(decoding: received.body, as: UTF8.self)
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
            }
        }
    }

    @Test func theRequestIsWrittenAsGivenAndItsConnectionServesTheNext() async throws {
        let server = try Self.echoingHeads()
        let harness = try UpstreamHarness()
        let first = await harness.perform(request(server.baseURL + "/a/../b?q=1", fields: ["Host": "up", "X-One": "1"]), on: .http1)
        let second = await harness.perform(request(server.baseURL, fields: ["Host": "up"]), on: .http1)
        let (idle, buffersKept) = await harness.onLoop { client, _ in (client.pool.idleCount, client.pool.inputBuffers.keptCount) }
        await harness.shutDown()

        #expect(first.error == nil && first.status == 200)
        #expect(first.bodyText == "GET /a/../b?q=1 HTTP/1.1\r\nHost: up\r\nX-One: 1|")
        #expect(first.fields?.map(\.name) == ["Content-Length"])
        #expect(second.bodyText == "GET / HTTP/1.1\r\nHost: up|")
        #expect(server.acceptCount == 1, "the second request reuses the first one's connection")
        #expect(idle == 1)
        #expect(buffersKept == 1, "the parked connection gave its read buffer back to the pool")
    }

    @Test(arguments: [UpstreamBody.length(11), .streaming])
    func aBodySentInPiecesArrivesWhole(body: UpstreamBody) async throws {
        let server = try Self.echoingHeads()
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request("POST", server.baseURL + "/up", fields: ["Host": "up"], body: body), on: .http1,
                                            started: { transfer, _, loop in
            Array("hello ".utf8).withUnsafeBytes { transfer.sendBody($0) }
            loop.runAfterEvents {
                Array("world".utf8).withUnsafeBytes { transfer.sendBody($0) }
                transfer.finishBody()
            }
        })
        await harness.shutDown()

        let framing = body == .streaming ? "Transfer-Encoding: chunked" : "Content-Length: 11"
        #expect(outcome.error == nil)
        #expect(outcome.bodyText == "POST /up HTTP/1.1\r\nHost: up\r\n\(framing)|hello world")
    }

    @Test func aPausedResponseResumesWhereItStopped() async throws {
        let size = 300_000
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n")
            connection.write(patternBody(size))
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "up"]), on: .http1, setUp: { recorder, loop in
            recorder.onBody = { transfer, recorder in
                // Every 64 KiB, ask for no more and resume after the current events.
                guard recorder.body.count / 65536 > recorder.pauseCount else { return true }
                loop.runAfterEvents { transfer.resumeReceiving() }
                return false
            }
        })
        await harness.shutDown()

        #expect(outcome.error == nil)
        #expect(outcome.body == patternBody(size))
        #expect(outcome.pauseCount >= 4)
    }

    @Test func aConnectionTheUpstreamClosedAfterItsAnswerIsNotUsedAgain() async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            // Closed with no `Connection: close`, as an upstream's idle timeout does.
        }
        let harness = try UpstreamHarness()
        let first = await harness.perform(request(server.baseURL, fields: ["Host": "up"]), on: .http1)
        // Whether the loop saw the close while the connection idled or the request met it
        // (and went again on a new connection), the request is served.
        let second = await harness.perform(request(server.baseURL, fields: ["Host": "up"]), on: .http1)
        await harness.shutDown()

        #expect(first.bodyText == "ok" && second.bodyText == "ok")
        #expect(second.error == nil)
        #expect(server.acceptCount == 2)
    }

    /// A body delimited by the close, whose last bytes and end come in one readiness report:
    /// the edge-triggered watch reports the end once, with the bytes, and the transfer reads
    /// on to it rather than wait for a report that does not come.
    @Test func aBodyWhoseEndCameWithItsLastBytesIsComplete() async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.writeAndClose("HTTP/1.1 200 OK\r\n\r\nall of it")
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "up"]), on: .http1)
        await harness.shutDown()

        #expect(outcome.error == nil)
        #expect(outcome.bodyText == "all of it")
    }

    /// A kept-alive response whose last bytes came with the upstream's end, in one readiness
    /// report: the end, which the edge-triggered watch reports only that once, is read
    /// before the pool keeps the connection, and the connection is not kept.
    @Test func aConnectionWhoseEndCameWithItsResponseIsNotKept() async throws {
        let server = try TestServer { connection in
            guard connection.readRequest() != nil else { return }
            connection.writeAndClose("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        }
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(server.baseURL, fields: ["Host": "up"]), on: .http1)
        let idle = await harness.onLoop { client, _ in client.pool.idleCount }
        await harness.shutDown()

        #expect(outcome.error == nil && outcome.bodyText == "ok")
        #expect(idle == 0)
    }

    /// An upstream that sends more than its response, the extra bytes behind it in the same
    /// write, where the response ends exactly at the end of the read buffer (16 KiB): the
    /// extra bytes wait in the socket, which the edge-triggered watch does not report again.
    /// The pool looks before it keeps the connection, and the next request never reads them
    /// as its answer.
    @Test func bytesBehindAResponseThatFilledTheReadBufferNeverAnswerTheNextRequest() async throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 16342\r\n\r\n"
        #expect(head.utf8.count + 16342 == 16 * 1024)
        let server = try TestServer { connection in
            while let received = connection.readRequest() {
                if received.requestLine.contains("/first") {
                    connection.write(head + String(repeating: "x", count: 16342) + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale")
                } else {
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh")
                }
            }
        }
        let harness = try UpstreamHarness()
        let first = await harness.perform(request(server.baseURL + "/first", fields: ["Host": "up"]), on: .http1)
        let second = await harness.perform(request(server.baseURL + "/second", fields: ["Host": "up"]), on: .http1)
        await harness.shutDown()

        #expect(first.error == nil && first.body.count == 16342)
        #expect(second.error == nil && second.bodyText == "fresh")
        #expect(server.acceptCount == 2)
    }

    @Test func aCutResponseFailsAndAClosingOneIsNotKept() async throws {
        let server = try TestServer { connection in
            guard let received = connection.readRequest() else { return }
            if received.requestLine.contains("/cut") {
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
            } else {
                connection.write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
            }
        }
        let harness = try UpstreamHarness()
        let cut = await harness.perform(request(server.baseURL + "/cut", fields: ["Host": "up"]), on: .http1)
        let closing = await harness.perform(request(server.baseURL, fields: ["Host": "up"]), on: .http1)
        let idle = await harness.onLoop { client, _ in client.pool.idleCount }
        await harness.shutDown()

        #expect(cut.error?.code == .receiveFailed)
        #expect(cut.bodyText == "abc" && cut.headBeforeFinish)
        #expect(closing.error == nil && closing.bodyText == "ok")
        #expect(idle == 0)
    }

    /// A plain connection's easy handle has curl's smallest receive buffer (1024 bytes,
    /// `UpstreamConnection`), which curl's SOCKS handshake uses while connecting: the
    /// server plays a SOCKS5 proxy (RFC 1928, no authentication), then the upstream.
    @Test func aPlainUpstreamIsReachedThroughASOCKS5Proxy() async throws {
        let target = Mutex<String?>(nil)
        let proxy = try TestServer { connection in
            guard let greeting = connection.readBytes(2), greeting[0] == 5,
                  connection.readBytes(Int(greeting[1])) != nil else { return }
            connection.write([5, 0])
            guard let request = connection.readBytes(5), request[0] == 5, request[1] == 1, request[3] == 3,
                  let rest = connection.readBytes(Int(request[4]) + 2) else { return }
            let host = String(decoding: rest.dropLast(2), as: UTF8.self)
            target.withLock { $0 = "\(host):\(Int(rest[rest.count - 2]) << 8 | Int(rest[rest.count - 1]))" }
            connection.write([5, 0, 0, 1, 127, 0, 0, 1, 0, 80])
            while let received = connection.readRequest() {
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(received.requestLine.utf8.count)\r\n\r\n" + received.requestLine)
            }
        }
        let harness = try UpstreamHarness()
        let options = UpstreamOptions(proxy: "socks5h://127.0.0.1:\(proxy.port)")
        let outcome = await harness.perform(request("http://upstream.test:8080/a", fields: ["Host": "upstream.test"], options: options), on: .http1)
        await harness.shutDown()

        #expect(outcome.error == nil && outcome.bodyText == "GET /a HTTP/1.1")
        #expect(target.withLock { $0 } == "upstream.test:8080")
    }

    @Test func aRefusedConnectionFailsAsLibcurlReportsIt() async throws {
        let server = try Self.echoingHeads()
        let url = server.baseURL
        server.stop()
        let harness = try UpstreamHarness()
        let outcome = await harness.perform(request(url, fields: ["Host": "up"]), on: .http1)
        await harness.shutDown()
        #expect(outcome.error?.code == .connectFailed)
        #expect(outcome.finishCount == 1)
    }
}
