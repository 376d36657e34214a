import COpenSSL
import Foundation
import LatchkeyTLS
import LatchkeyTestSupport
import Testing
@testable import LatchkeyServer

/// Certificates the TLS tests share, made once with the `openssl` command: the server's CA
/// and leaf (localhost, 127.0.0.1), a client CA with alice's certificate, and mallory's
/// from a CA the server does not know. Held in memory: the files go once they are read.
struct TLSFixture: Sendable {
    let serverCA: Certificate
    let server: TLSIdentity
    let clientCA: Certificate
    let alice: TLSIdentity
    let mallory: TLSIdentity

    static let shared = Result { try TLSFixture() }

    init() throws {
        let certificates = try TestCertificates()
        let serverCA = try certificates.authority("server-ca", commonName: "Server CA")
        let clientCA = try certificates.authority("client-ca", commonName: "Client CA")
        let strangerCA = try certificates.authority("stranger-ca", commonName: "Stranger CA")
        self.serverCA = try Self.certificate(serverCA.cert, in: certificates)
        self.clientCA = try Self.certificate(clientCA.cert, in: certificates)
        server = try Self.identity(try certificates.leaf("server", commonName: "localhost", signedBy: serverCA), in: certificates)
        alice = try Self.identity(try certificates.leaf("alice", commonName: "alice", signedBy: clientCA, client: true), in: certificates)
        mallory = try Self.identity(try certificates.leaf("mallory", commonName: "mallory", signedBy: strangerCA, client: true), in: certificates)
    }

    static func certificate(_ path: String, in certificates: TestCertificates) throws -> Certificate {
        try Certificate.chain(pem: try certificates.contents(path), origin: path)[0]
    }

    static func identity(_ files: TestCertificates.Files, in certificates: TestCertificates) throws -> TLSIdentity {
        TLSIdentity(
            chain: try Certificate.chain(pem: try certificates.contents(files.cert), origin: files.cert),
            key: try PrivateKey.load(pem: try certificates.contents(files.key), origin: files.key))
    }
}

/// The server on a TLS listener, over real loopback sockets with OpenSSL's client:
/// handshakes, refusals, resumption, timeouts, backpressure both ways, mTLS.
@Suite(.serialized) struct TLSServerTests {
    let fixture: TLSFixture
    let ticketKeys: TicketKeyRing

    init() throws {
        fixture = try TLSFixture.shared.get()
        ticketKeys = try TicketKeyRing()
    }

    func context(clientCA: [Certificate]? = nil) throws -> TLSServerContext {
        try TLSServerContext(identity: fixture.server, clientCA: clientCA, ticketKeys: ticketKeys, resumptionScope: "test")
    }

    func server(clientCA: [Certificate]? = nil, handshakeTimeout: Duration = .seconds(5), settings: ConnectionSettings = .init()) throws -> ServerHarness {
        try ServerHarness(settings: settings, tls: ListenerTLS(context: try context(clientCA: clientCA), handshakeTimeout: handshakeTimeout))
    }

    func client(_ server: ServerHarness, _ change: (inout TLSTestClient.Options) -> Void = { _ in }) throws -> TLSTestClient {
        var options = TLSTestClient.Options(trusted: [fixture.serverCA])
        change(&options)
        return try TLSTestClient(port: server.port, options)
    }

    func failure(_ outcomes: [TLSHandshakeOutcome]) -> TLSHandshakeFailure? {
        if case .failed(let failure) = outcomes.first { return failure }
        return nil
    }

    @Test func handshakeThenRequestAndResponse() throws {
        let server = try server()
        let client = try client(server)
        #expect(client.handshake())
        client.send("GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let text = client.read(until: "subject=none")
        #expect(text.hasPrefix("HTTP/1.1 200 "))
        #expect(text.contains("GET /hello bytes=0 tls=TLSv1.3 subject=none"))
        guard case .completed(let info) = server.handshakes.waitFor().first else {
            Issue.record("no completed handshake reported")
            return
        }
        #expect(info.alpn == "http/1.1" && info.serverName == "localhost" && !info.resumed && info.clientSubject == nil)
    }

    @Test func tls11IsRefused() throws {
        let server = try server()
        let client = try client(server) { $0.version = TLS1_1_VERSION }
        #expect(!client.handshake())
        #expect(failure(server.handshakes.waitFor())?.reason == .protocolVersion)
    }

    @Test func aClientOfferingOnlyH2IsRefused() throws {
        let server = try server()
        let client = try client(server) { $0.alpn = ["h2"] }
        #expect(!client.handshake())
        let failure = failure(server.handshakes.waitFor())
        #expect(failure?.reason == .other)
        #expect(failure?.detail.contains("no application protocol") == true)
    }

    /// A ticket made before the listener's context was replaced (a certificate reload)
    /// still resumes: the contexts share the ticket keys.
    @Test(arguments: [TLS1_2_VERSION, TLS1_3_VERSION])
    func aTicketResumesTheSessionAcrossAContextReload(version: Int32) throws {
        let listenerTLS = ListenerTLS(context: try context(), handshakeTimeout: .seconds(5))
        let server = try ServerHarness(tls: listenerTLS)
        let first = try client(server) { $0.version = version }
        #expect(first.handshake() && !first.resumed)
        first.send("GET /1 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(first.read(until: "subject=").contains("GET /1"))
        let session = first.session()
        defer { SSL_SESSION_free(session) }
        listenerTLS.replace(try context())
        let second = try client(server) {
            $0.version = version
            $0.session = session
        }
        #expect(second.handshake() && second.resumed)
        second.send("GET /2 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(second.read(until: "subject=").contains("GET /2"))
        let outcomes = server.handshakes.waitFor(2)
        guard outcomes.count == 2, case .completed(let resumed) = outcomes[1] else {
            Issue.record("expected two completed handshakes, got \(outcomes)")
            return
        }
        #expect(resumed.resumed)
    }

    @Test func plainHTTPOnTheTLSPortIsAnsweredInPlainHTTP() throws {
        let server = try server()
        let client = try TestClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let text = client.read(until: "}")
        #expect(text.hasPrefix("HTTP/1.1 400 "))
        #expect(text.contains("Connection: close"))
        #expect(text.contains("\"error\":\"plain_http_to_tls_port\""))
        #expect(client.peerClosed())
        #expect(failure(server.handshakes.waitFor())?.reason == .plainHTTP)
    }

    /// The first bytes of a ClientHello (a handshake record of 512 bytes announced), then
    /// the client leaves; and one that leaves without sending anything.
    @Test(arguments: [[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03] as [UInt8], []])
    func aClientLeavingMidHandshakeIsReportedClosed(sent: [UInt8]) throws {
        let server = try server()
        do {
            let client = try TestClient(port: server.port)
            var bytes = sent
            _ = bytes.withUnsafeMutableBytes { Glibc.send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        #expect(failure(server.handshakes.waitFor())?.reason == .closed)
    }

    @Test func aStalledHandshakeIsClosedAtTheHandshakeTimeout() throws {
        let server = try server(handshakeTimeout: .milliseconds(300))
        let client = try TestClient(port: server.port)
        let opened = ContinuousClock.now
        #expect(client.peerClosed())
        #expect(ContinuousClock.now - opened < .seconds(4))
        #expect(failure(server.handshakes.waitFor())?.reason == .timeout)
    }

    @Test func aLargeResponseGoesOutThroughBackpressure() throws {
        let server = try server(settings: ConnectionSettings(outboundHighWater: 64 * 1024))
        let client = try client(server)
        #expect(client.handshake())
        client.send("GET /big/8000000 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(client.readResponseBodyLength() == 8_000_000)
    }

    /// The handler pauses the body after every chunk, so chunks wait in the input buffer
    /// and the next TLS record is read only in part: its rest waits decrypted inside the
    /// session, which epoll does not report. The last record's rest must be read when
    /// the handler resumes, or the upload never ends.
    @Test func aPausedUploadIsReadToTheEndFromTheSessionsBuffer() throws {
        let server = try server()
        let client = try client(server)
        #expect(client.handshake())
        let chunk = Array("3e8\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "u"), count: 1000) + Array("\r\n".utf8)
        var request = Array("POST /paused-upload HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0..<100 { request += chunk }
        request += Array("0\r\n\r\n".utf8)
        client.send(&request)
        #expect(client.read(until: "subject=").contains("POST /paused-upload bytes=100000"))
    }

    @Test func mTLSAcceptsAClientCertificateOfTheCA() throws {
        let server = try server(clientCA: [fixture.clientCA])
        let client = try client(server) { $0.identity = fixture.alice }
        #expect(client.handshake())
        client.send("GET /m HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(client.read(until: "subject=CN=alice").contains("subject=CN=alice"))
        guard case .completed(let info) = server.handshakes.waitFor().first else {
            Issue.record("no completed handshake reported")
            return
        }
        #expect(info.clientSubject == "CN=alice")
    }

    @Test(arguments: [false, true])
    func mTLSRefusesAClientWithoutACertificateOfTheCA(presentsOne: Bool) throws {
        let server = try server(clientCA: [fixture.clientCA])
        let client = try client(server) { if presentsOne { $0.identity = fixture.mallory } }
        // In TLS 1.3 the client's side completes before the server has read its
        // certificate: the refusal shows as no answer.
        _ = client.handshake()
        client.send("GET /m HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(!client.read(until: "HTTP/1.1").contains("HTTP/1.1"))
        let failure = failure(server.handshakes.waitFor())
        #expect(failure?.reason == (presentsOne ? .clientCertificateRejected : .noClientCertificate))
    }

    /// OpenSSL 3 clients report a close without close_notify as an unexpected EOF.
    @Test func anIdleConnectionIsClosedWithCloseNotify() throws {
        let server = try server(settings: ConnectionSettings(idleTimeout: .milliseconds(300)))
        let client = try client(server)
        #expect(client.handshake())
        client.send("GET /idle HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let end = client.readToTheEnd()
        #expect(end.tail.contains("GET /idle bytes=0"))
        #expect(end.error == SSL_ERROR_ZERO_RETURN)
    }

    /// A response cut short ends without close_notify, so that the client sees the cut
    /// even where it reads to the end of the stream (RFC 8446 §6.1).
    @Test func aResponseCutShortEndsWithoutCloseNotify() throws {
        let server = try server()
        let client = try client(server)
        #expect(client.handshake())
        client.send("GET /cut/1000 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let end = client.readToTheEnd()
        #expect(end.tail.hasSuffix(String(repeating: "x", count: 100)))
        #expect(end.error != SSL_ERROR_ZERO_RETURN)
    }

    /// The client did nothing wrong: no failed handshake is reported.
    @Test func aConnectionHandshakingAtShutdownClosesUnreported() throws {
        let server = try server()
        let client = try TestClient(port: server.port)
        var hello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]
        _ = hello.withUnsafeMutableBytes { Glibc.send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let deadline = ContinuousClock.now + .seconds(5)
        while !server.connectionEvents.all.contains(where: { if case .opened = $0 { true } else { false } }), ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        server.drain()
        #expect(client.peerClosed())
        #expect(server.handshakes.all.isEmpty)
    }

    /// The client stops reading a large response, so the socket fills, then asks for a
    /// KeyUpdate and pipelines a request: the loop must stay idle while the request's
    /// bytes wait in the socket, and answer once the client reads again. (OpenSSL 3 sends
    /// the KeyUpdate reply with the next write, so this does not force SSL_read's
    /// WANT_WRITE; `CrossedTLSWaitTests` checks the interest that case gets.)
    @Test func aKeyUpdateWhileTheSocketIsFullNeitherSpinsNorStalls() throws {
        let size = 16_000_000
        let server = try server(settings: ConnectionSettings(idleTimeout: .milliseconds(500)))
        let client = try client(server)
        #expect(client.handshake())
        client.send("GET /big/\(size) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        // Loopback fills the socket buffers within milliseconds.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(client.requestKeyUpdate())
        client.send("GET /next HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let before = server.loopCPUTime
        Thread.sleep(forTimeInterval: 0.5)
        #expect(server.loopCPUTime - before < .milliseconds(150))
        let end = client.readToTheEnd()
        #expect(end.count > size)
        #expect(end.tail.contains("GET /next bytes=0"))
        #expect(end.error == SSL_ERROR_ZERO_RETURN)
    }
}
