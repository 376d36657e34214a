import Foundation
import Testing
@testable import LatchkeyServer

/// The server alone, over real sockets: framing, keep-alive, pipelining, 100-continue,
/// refusals and timeouts, without the proxy in front of it.
@Suite(.serialized) struct HTTPServerTests {
    @Test func pipelinedRequestsAreAnsweredInOrderOnOneConnection() throws {
        let server = try ServerHarness()
        let client = try TestClient(port: server.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /c HTTP/1.1\r\nHost: x\r\n\r\n")
        let text = client.read(until: "HTTP/1.1 200", count: 3)
        let bodies = ["GET /a bytes=0", "POST /b bytes=3", "GET /c bytes=0"]
        let positions = bodies.compactMap { text.range(of: $0)?.lowerBound }
        #expect(positions.count == 3)
        #expect(positions == positions.sorted())
    }

    @Test func chunkedRequestBodyIsDecoded() throws {
        let server = try ServerHarness()
        let client = try TestClient(port: server.port)
        client.send("PUT /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        #expect(client.read(until: "bytes=").contains("PUT /c bytes=5"))
    }

    @Test func expectContinueGetsTheInterimResponseBeforeTheBody() throws {
        let server = try ServerHarness()
        let client = try TestClient(port: server.port)
        client.send("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        #expect(client.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 100 Continue\r\n"))
        client.send("body")
        #expect(client.read(until: "bytes=").contains("POST /e bytes=4"))
    }

    @Test func smugglingShapedRequestIsRefusedAndTheConnectionClosed() throws {
        let server = try ServerHarness()
        let client = try TestClient(port: server.port)
        client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        let text = client.read(until: "}")
        #expect(text.hasPrefix("HTTP/1.1 400 "))
        #expect(text.contains("Connection: close"))
        #expect(client.peerClosed())
    }

    /// Without keep-alive each connection carries one request, whatever the client asked:
    /// the second of two pipelined requests is never answered.
    @Test func withoutKeepAliveTheConnectionClosesAfterOneResponse() throws {
        let server = try ServerHarness(settings: ConnectionSettings(keepAlive: false))
        let client = try TestClient(port: server.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        let text = client.read(until: "GET /b")  // until the server closes
        #expect(text.contains("GET /a bytes=0") && !text.contains("GET /b"))
        #expect(text.contains("Connection: close"))
        #expect(client.peerClosed())
    }

    @Test func slowHeadGets408() throws {
        let server = try ServerHarness(settings: ConnectionSettings(headTimeout: .milliseconds(300)))
        let client = try TestClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHo")
        #expect(client.read(until: "}").hasPrefix("HTTP/1.1 408 "))
    }

    @Test func silentNewConnectionIsClosedAtTheHeadTimeout() throws {
        let server = try ServerHarness(settings: ConnectionSettings(headTimeout: .milliseconds(300), idleTimeout: .seconds(30)))
        let client = try TestClient(port: server.port)
        let opened = ContinuousClock.now
        #expect(client.peerClosed())
        #expect(ContinuousClock.now - opened < .seconds(4))
    }

    /// The timer is moved lazily (`ServerConnection.updateTimer`): when the first request's
    /// idle deadline passes, the connection's last activity decides, and it stays open.
    @Test func anIdleConnectionTimesOutCountingFromItsLastRequest() throws {
        let server = try ServerHarness(settings: ConnectionSettings(idleTimeout: .seconds(2)))
        let client = try TestClient(port: server.port)
        client.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.read(until: "bytes=").contains("GET /1"))
        Thread.sleep(forTimeInterval: 1.2)
        client.send("GET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.read(until: "bytes=").contains("GET /2"))
        // Past the first request's deadline, before the second's.
        Thread.sleep(forTimeInterval: 1.3)
        client.send("GET /3 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.read(until: "bytes=").contains("GET /3"))
        let answered = ContinuousClock.now
        #expect(client.peerClosed())
        #expect(ContinuousClock.now - answered > .seconds(1))
    }

    /// A body already waiting in the socket beyond the turn's read budget is read on at the
    /// next turns: the edge-triggered watch reports the socket once, and the connection asks
    /// for it again rather than wait for bytes that will not come (the whole body is sent
    /// while the loop is held, so no arrival reports it later).
    @Test func aBodyWaitingBeyondTheTurnsBudgetIsReadOnTheNextTurns() throws {
        let server = try ServerHarness(settings: ConnectionSettings(readBudgetPerTurn: 4096))
        let client = try TestClient(port: server.port)
        server.whileLoopIsHeld { client.send("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 40000\r\n\r\n" + String(repeating: "b", count: 40000)) }
        #expect(client.read(until: "bytes=40000").contains("POST /b bytes=40000"))
    }

    /// The same for a body the handler pauses after the first buffer: what waits behind it
    /// in the socket is read once the body resumes, with no arrival to report it.
    @Test func aBodyWaitingBehindAPauseIsReadOnceItResumes() throws {
        let server = try ServerHarness()
        let client = try TestClient(port: server.port)
        server.whileLoopIsHeld {
            client.send("POST /paused-upload HTTP/1.1\r\nHost: x\r\nContent-Length: 40000\r\n\r\n" + String(repeating: "b", count: 40000))
        }
        #expect(client.read(until: "bytes=40000").contains("POST /paused-upload bytes=40000"))
    }

    /// A client that ends its sending right behind its request, both in one readiness
    /// report: the request is answered, and the end, which the edge-triggered watch reports
    /// only that once, closes the connection then rather than at the idle timeout.
    @Test func aClientsEndThatCameWithItsRequestClosesTheConnectionAfterTheAnswer() throws {
        let server = try ServerHarness(settings: ConnectionSettings(idleTimeout: .seconds(30)))
        let client = try TestClient(port: server.port)
        client.sendThenFinish("GET /last HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.read(until: "bytes=0").contains("GET /last bytes=0"))
        let deadline = ContinuousClock.now + .seconds(5)
        while !server.connectionEvents.all.contains(.closed) && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(server.connectionEvents.all == [.opened, .closed])
    }

    /// The same end behind a request answered later, as a proxied one is: nothing else
    /// happens on the connection meanwhile, and the end is still read at once (the client
    /// has gone, as nginx takes it, so the answer is dropped) rather than at the idle timeout.
    @Test func aClientsEndThatCameWithARequestAnsweredLaterClosesTheConnectionAtOnce() throws {
        let server = try ServerHarness(settings: ConnectionSettings(idleTimeout: .seconds(30)))
        let client = try TestClient(port: server.port)
        client.sendThenFinish("GET /later HTTP/1.1\r\nHost: x\r\n\r\n")
        let deadline = ContinuousClock.now + .seconds(5)
        while !server.connectionEvents.all.contains(.closed) && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(server.connectionEvents.all == [.opened, .closed])
    }

    @Test func trickledBodyGets408AtTheBodyTimeout() throws {
        let server = try ServerHarness(settings: ConnectionSettings(idleTimeout: .seconds(30), bodyTimeout: .milliseconds(500)))
        let client = try TestClient(port: server.port)
        client.send("POST /t HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab")
        let text = client.read(until: "}")
        #expect(text.hasPrefix("HTTP/1.1 408 "))
        #expect(text.contains("Connection: close"))
        #expect(text.contains("request body did not arrive in time"))
    }

    @Test func connectionCapIsSharedByTheLoopsOfAProcess() throws {
        let count = ConnectionCount()
        let first = try ServerHarness(settings: ConnectionSettings(maxConnections: 1), connectionCount: count)
        let second = try ServerHarness(settings: ConnectionSettings(maxConnections: 1), connectionCount: count)
        let admitted = try TestClient(port: first.port)
        admitted.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(admitted.read(until: "bytes=").contains("GET /1"))
        let refused = try TestClient(port: second.port)
        #expect(refused.read(until: "}").hasPrefix("HTTP/1.1 503 "))
        #expect(count.current == 1)
    }

    @Test func connectionsOverTheCapGet503() throws {
        let server = try ServerHarness(settings: ConnectionSettings(maxConnections: 1))
        let first = try TestClient(port: server.port)
        first.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(first.read(until: "bytes=").contains("GET /1"))
        let second = try TestClient(port: server.port)
        #expect(second.read(until: "}").hasPrefix("HTTP/1.1 503 "))
    }

    @Test func handlerHearsConnectionsOpenCloseAndRefusedOverTheCap() throws {
        let server = try ServerHarness(settings: ConnectionSettings(maxConnections: 1))
        var first: TestClient? = try TestClient(port: server.port)
        first?.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(first?.read(until: "bytes=").contains("GET /1") == true)
        let second = try TestClient(port: server.port)
        #expect(second.read(until: "}").hasPrefix("HTTP/1.1 503 "))
        first = nil
        let deadline = ContinuousClock.now + .seconds(5)
        while server.connectionEvents.all.count < 3 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(server.connectionEvents.all == [.opened, .refusedOverCapacity, .closed])
    }

    /// The server's list of connections takes out whichever closes (the last one moving to
    /// its place) and still reaches every other one when it closes them all.
    @Test func connectionsClosingInAnyOrderLeaveTheOthersListed() throws {
        let server = try ServerHarness()
        var clients: [TestClient?] = try (0..<4).map { _ in try TestClient(port: server.port) }
        for (i, client) in clients.enumerated() {
            client?.send("GET /\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(client?.read(until: "bytes=").contains("GET /\(i)") == true)
        }
        clients[0] = nil
        clients[2] = nil
        let deadline = ContinuousClock.now + .seconds(5)
        while server.onLoop({ $0.openConnections }) > 2 && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(server.onLoop { $0.openConnections } == 2)
        server.onLoop { $0.closeAll() }
        #expect(clients[1]?.peerClosed() == true)
        #expect(clients[3]?.peerClosed() == true)
        #expect(server.onLoop { $0.openConnections } == 0)
        #expect(server.connectionEvents.all == Array(repeating: .opened, count: 4) + Array(repeating: .closed, count: 4))
    }

    @Test func headResponseCarriesNoBody() throws {
        let server = try ServerHarness()
        let client = try TestClient(port: server.port)
        client.send("HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /g HTTP/1.1\r\nHost: x\r\n\r\n")
        let text = client.read(until: "GET /g bytes=0")
        #expect(text.contains("GET /g bytes=0"))
        #expect(!text.contains("HEAD /h bytes="))
    }
}
