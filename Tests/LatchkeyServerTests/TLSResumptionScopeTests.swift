import COpenSSL
@testable import LatchkeyServer
@testable import LatchkeyTLS
import Testing

/// Every context shares the process's ticket keys, and a resumed session skips the client
/// certificate's verification: a session made on one listener must not resume on another,
/// nor on an mTLS listener after its client CAs changed.
@Suite(.serialized) struct TLSResumptionScopeTests {
    let fixture: TLSFixture
    let ticketKeys: TicketKeyRing

    init() throws {
        fixture = try TLSFixture.shared.get()
        ticketKeys = try TicketKeyRing()
    }

    @Test(arguments: [TLS1_2_VERSION, TLS1_3_VERSION])
    func aSessionFromAnotherListenerDoesNotPassAnMTLSListener(version: Int32) throws {
        let open = try ServerHarness(tls: ListenerTLS(
            context: try TLSServerContext(identity: fixture.server, ticketKeys: ticketKeys, resumptionScope: "open"),
            handshakeTimeout: .seconds(5)))
        let first = try TLSTestClient(port: open.port, .init(trusted: [fixture.serverCA], version: version))
        #expect(first.handshake())
        first.send("GET /1 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(first.read(until: "subject=").contains("GET /1"))
        let session = first.session()
        defer { SSL_SESSION_free(session) }

        let mtls = try ServerHarness(tls: ListenerTLS(
            context: try TLSServerContext(identity: fixture.server, clientCA: [fixture.clientCA], ticketKeys: ticketKeys, resumptionScope: "mtls"),
            handshakeTimeout: .seconds(5)))
        let second = try TLSTestClient(port: mtls.port, .init(trusted: [fixture.serverCA], version: version, session: session))
        _ = second.handshake()
        #expect(!second.resumed)
        second.send("GET /2 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(!second.read(until: "HTTP/1.1").contains("HTTP/1.1"))
        guard case .failed(let failure) = mtls.handshakes.waitFor().first else {
            Issue.record("the mTLS listener must refuse a client without a certificate")
            return
        }
        #expect(failure.reason == .noClientCertificate)
    }

    @Test func theSessionIDContextFollowsTheScopeAndTheClientCAs() throws {
        let plain = try TLSServerContext.sessionIDContext(scope: "lan", clientCA: nil)
        #expect(plain.count == 32)
        #expect(try TLSServerContext.sessionIDContext(scope: "lan", clientCA: nil) == plain)
        #expect(try TLSServerContext.sessionIDContext(scope: "pod", clientCA: nil) != plain)
        let withCA = try TLSServerContext.sessionIDContext(scope: "lan", clientCA: [fixture.clientCA])
        #expect(withCA != plain)
        #expect(try TLSServerContext.sessionIDContext(scope: "lan", clientCA: [fixture.serverCA]) != withCA)
    }
}
