import Foundation
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

@Suite("Config: TLS listeners, client certificates and the CA")
struct ConfigTLSTests {
    private func load(_ listeners: String, top: String = "", baseDirectory: String? = nil) throws -> Config {
        try ConfigTestSupport.load(top + "listeners:\n" + listeners + "\n" + ConfigTestSupport.minimalRoutes, baseDirectory: baseDirectory)
    }

    private func problems(_ listeners: String, top: String = "", checkExternal: Bool = false) -> [ConfigProblem] {
        ConfigTestSupport.problems(top + "listeners:\n" + listeners + "\n" + ConfigTestSupport.minimalRoutes, checkExternal: checkExternal)
    }

    @Test func certificateFilesAreTakenAgainstTheConfigDirectory() throws {
        let config = try load("""
              - listen: 127.0.0.1:8443
                tls: { cert_file: tls/fullchain.pem, key_file: /etc/latchkey/key.pem }
            """, baseDirectory: "/etc/latchkey")
        let tls = try #require(config.listeners[0].tls)
        #expect(tls.certificate == .files(certFile: "/etc/latchkey/tls/fullchain.pem", keyFile: "/etc/latchkey/key.pem"))
        #expect(tls.handshakeTimeout == ListenerTLSConfig.defaultHandshakeTimeout)
    }

    @Test func localCAWithAHandshakeTimeout() throws {
        let config = try load("  - { listen: 127.0.0.1:8443, tls: { local_ca: true, handshake_timeout: 3s } }")
        #expect(config.listeners[0].tls == ListenerTLSConfig(certificate: .localCA, handshakeTimeout: .seconds(3)))
    }

    @Test func listenersWithoutTLSStayPlain() throws {
        let config = try load("  - { listen: 127.0.0.1:8080 }")
        #expect(config.listeners[0].tls == nil)
        #expect(config.ca == nil)
    }

    @Test(arguments: [
        ("{ local_ca: true, cert_file: c.pem }", "listeners[0].tls.local_ca", "local_ca beside cert_file"),
        ("{ local_ca: false }", "listeners[0].tls", "tls names no certificate"),
        ("{ handshake_timeout: 5s }", "listeners[0].tls", "tls names no certificate"),
        ("{ cert_file: c.pem }", "listeners[0].tls", "missing key 'key_file'"),
        ("{ key_file: k.pem }", "listeners[0].tls", "missing key 'cert_file'"),
        ("{ cert_file: \"\", key_file: k.pem }", "listeners[0].tls.cert_file", "empty path"),
        ("{ local_ca: true, handshake_timeout: 0s }", "listeners[0].tls.handshake_timeout", "must be longer than zero"),
    ])
    func tlsShapeProblems(_ tls: String, _ path: String, _ message: String) throws {
        let found = problems("  - { listen: 127.0.0.1:8443, tls: \(tls) }")
        let problem = try #require(found.first)
        #expect(found.count == 1, "\(found)")
        #expect(problem.path == path)
        #expect(problem.message.contains(message), "\(problem.message)")
        #expect(problem.line == 2)
    }

    @Test func misspelledKeysGetASuggestion() throws {
        let found = problems("  - { listen: 127.0.0.1:8443, tls: { cert_fil: c.pem, key_file: k.pem } }")
        let problem = try #require(found.first { $0.path == "listeners[0].tls.cert_fil" })
        #expect(problem.description.hasSuffix("unknown key 'cert_fil'; did you mean 'cert_file'? (expected one of cert_file, key_file, local_ca, handshake_timeout)"))
        #expect(found.map(\.message).contains("missing key 'cert_file'"))
    }

    @Test func tlsOnAUnixSocketIsRefused() throws {
        let found = problems("  - { listen: \"unix:/tmp/latchkey.sock\", tls: { local_ca: true } }")
        let problem = try #require(found.first)
        #expect(found.count == 1)
        #expect(problem.path == "listeners[0].tls")
        #expect(problem.description.hasPrefix("test.yaml:2:"))
        #expect(problem.message.contains("Unix socket"))
    }

    @Test func aClientCertificateGuardsAReachableTLSListener() throws {
        let config = try load("""
              - listen: 0.0.0.0:8443
                tls: { local_ca: true }
                inbound: { client_ca_file: clients-ca.pem }
            """, baseDirectory: "/etc/latchkey")
        #expect(config.listeners[0].inbound == .clientCertificate(caFile: "/etc/latchkey/clients-ca.pem"))
    }

    @Test func aClientCertificateNeedsTLS() throws {
        let found = problems("""
              - listen: 0.0.0.0:8080
                inbound: { client_ca_file: clients-ca.pem }
            """)
        let problem = try #require(found.first)
        #expect(found.count == 1, "\(found)")
        #expect(problem.path == "listeners[0].inbound.client_ca_file")
        #expect(problem.line == 3)
        #expect(problem.expected?.contains("tls:") == true)
    }

    @Test func aClientCertificateIsOneInboundCheckAmongOthers() {
        let found = problems("""
              - listen: 127.0.0.1:8443
                tls: { local_ca: true }
                inbound: { client_ca_file: ca.pem, open: true }
            """)
        #expect(found.map(\.path) == ["listeners[0].inbound"])
        #expect(found.first?.message == "more than one check (client_ca_file, open: true)")
    }

    @Test func aReachableTLSListenerStillNeedsAnInboundCheck() throws {
        let found = problems("  - { listen: 0.0.0.0:8443, tls: { local_ca: true } }")
        let problem = try #require(found.first)
        #expect(found.map(\.path) == ["listeners[0].listen"])
        #expect(problem.message.contains("inbound.client_ca_file"))
    }

    @Test func ownCertificateAuthority() throws {
        let config = try load("  - { listen: 127.0.0.1:8443, tls: { local_ca: true } }",
                              top: "ca: { cert_file: ca/ca.pem, key_file: /secrets/ca.key }\n", baseDirectory: "/etc/latchkey")
        #expect(config.ca == CertificateAuthoritySettings(certFile: "/etc/latchkey/ca/ca.pem", keyFile: "/secrets/ca.key"))
    }

    @Test func certificateAuthorityNeedsBothFiles() throws {
        let found = problems("  - { listen: 127.0.0.1:8080 }", top: "ca: { cert_file: ca.pem }\n")
        let problem = try #require(found.first)
        #expect(found.count == 1)
        #expect(problem.path == "ca")
        #expect(problem.message == "missing key 'key_file'")
        #expect(problem.line == 1)
    }

    @Test func missingFilesAreReportedAtTheirKeysWhenCheckingExternally() {
        let found = problems("""
              - listen: 127.0.0.1:8443
                tls: { cert_file: /nonexistent/cert.pem, key_file: /nonexistent/key.pem }
            """, top: "ca: { cert_file: /nonexistent/ca.pem, key_file: /nonexistent/ca.key }\n", checkExternal: true)
        #expect(Set(found.map(\.path)) == [
            "listeners[0].tls.cert_file", "listeners[0].tls.key_file", "ca.cert_file", "ca.key_file",
        ])
        #expect(found.allSatisfy { $0.message.contains("/nonexistent/") }, "\(found)")
    }
}
