import Foundation
import LatchkeyTLS
import Testing
@testable import LatchkeyConfig

/// `check`'s reading of the TLS files a configuration names, driven with configuration
/// values (the keys' shape is ConfigValidator+TLS's), each problem at its key.
@Suite struct ConfigCertificateFilesTests {
    static let now = Date(timeIntervalSince1970: 1_780_000_000)
    static let authority = try! CertificateAuthority.make(commonName: "Test CA", lifetime: .seconds(365 * 86_400), now: now)

    final class Files {
        let directory = NSTemporaryDirectory() + "latchkey-config-tls-" + UUID().uuidString

        init() { try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func write(_ name: String, _ bytes: [UInt8], mode: mode_t = 0o600) -> String {
            let path = directory + "/" + name
            precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            precondition(chmod(path, mode) == 0)
            return path
        }

        /// A leaf minted at `mintedAt`: its chain and key files.
        func leaf(mintedAt: Date = ConfigCertificateFilesTests.now, keyMode: mode_t = 0o600) throws -> (cert: String, key: String) {
            let identity = try ConfigCertificateFilesTests.authority.mintLeaf(names: ["app.test"], now: mintedAt)
            let name = UUID().uuidString
            return (write(name + ".pem", try identity.chain.flatMap { try $0.pem() }, mode: 0o644), write(name + ".key", try identity.key.pem(), mode: keyMode))
        }
    }

    static func check(_ listeners: [ListenerConfig], ca: CertificateAuthoritySettings? = nil) -> (errors: [String], warnings: [String]) {
        var validator = ConfigValidator(options: .init(baseDirectory: nil, checkExternal: true, environment: [:]))
        validator.checkCertificateFiles(of: Config(listeners: listeners, routes: [], ca: ca), now: now)
        return (validator.diagnostics.problems.map { "\($0.path): \($0.message)" }, validator.diagnostics.warnings.map { "\($0.path): \($0.message)" })
    }

    static func listener(_ certFile: String, _ keyFile: String, inbound: InboundAccess = .loopbackOnly) -> ListenerConfig {
        ListenerConfig(name: "lan", address: .tcp(host: "127.0.0.1", port: 8443), inbound: inbound,
                       tls: ListenerTLSConfig(certificate: .files(certFile: certFile, keyFile: keyFile)))
    }

    @Test func goodFilesPass() throws {
        let files = Files()
        let (cert, key) = try files.leaf()
        let result = Self.check([Self.listener(cert, key, inbound: .clientCertificate(caFile: cert))])
        #expect(result.errors.isEmpty && result.warnings.isEmpty)
    }

    @Test func eachBadFileIsReportedAtItsKey() throws {
        let files = Files()
        let (cert, key) = try files.leaf()
        let (expiredCert, expiredKey) = try files.leaf(mintedAt: Self.now.addingTimeInterval(-30 * 86_400))
        let (_, openKey) = try files.leaf(keyMode: 0o644)
        let truncated = files.write("truncated.pem", Array(try Self.authority.certificate.pem().prefix(200)))
        let result = Self.check([
            Self.listener(expiredCert, expiredKey),
            Self.listener(cert, openKey),
            Self.listener(truncated, key),
            Self.listener(cert, expiredKey),
            Self.listener(files.directory + "/missing.pem", key, inbound: .clientCertificate(caFile: key)),
        ])
        #expect(result.errors.count == 6)
        #expect(result.errors[0].hasPrefix("listeners[0].tls.cert_file: certificate file \(expiredCert): the certificate (CN=app.test) expired on "))
        #expect(result.errors[1] == "listeners[1].tls.key_file: key file \(openKey) is accessible by others (mode 0644); run chmod 600 \(openKey)")
        #expect(result.errors[2].hasPrefix("listeners[2].tls.cert_file: certificate file \(truncated): a PEM certificate is truncated or corrupted"))
        #expect(result.errors[3] == "listeners[3].tls.key_file: key file \(expiredKey) does not belong to the certificate in \(cert) (CN=app.test); "
            + "give the key the certificate was issued for")
        #expect(result.errors[4] == "listeners[4].tls.cert_file: cannot read certificate file \(files.directory)/missing.pem: no such file or directory")
        #expect(result.errors[5] == "listeners[4].inbound.client_ca_file: certificate file \(key): no PEM certificate (expected -----BEGIN CERTIFICATE-----)")
    }

    @Test func aCertificateEndingWithinSevenDaysIsAWarning() throws {
        let files = Files()
        let (cert, key) = try files.leaf(mintedAt: Self.now.addingTimeInterval(-86_400))
        let result = Self.check([Self.listener(cert, key)])
        #expect(result.errors.isEmpty)
        #expect(result.warnings.count == 1)
        #expect(result.warnings.first?.hasPrefix("listeners[0].tls.cert_file: certificate file \(cert): the certificate (CN=app.test) expires on ") == true)
        #expect(result.warnings.first?.hasSuffix(", within 7 days; renew it") == true)
    }

    @Test func theCAFilesMustBeACAAndItsPrivateKey() throws {
        let files = Files()
        let caCert = files.write("ca.pem", try Self.authority.certificate.pem(), mode: 0o644)
        let caKey = files.write("ca.key", try Self.authority.key.pem())
        #expect(Self.check([], ca: CertificateAuthoritySettings(certFile: caCert, keyFile: caKey)).errors.isEmpty)
        let (leafCert, leafKey) = try files.leaf()
        #expect(Self.check([], ca: CertificateAuthoritySettings(certFile: leafCert, keyFile: leafKey)).errors
            == ["ca.cert_file: certificate file \(leafCert) (CN=app.test) is not a CA certificate"])
        chmod(caKey, 0o640)
        #expect(Self.check([], ca: CertificateAuthoritySettings(certFile: caCert, keyFile: caKey)).errors
            == ["ca.key_file: key file \(caKey) is accessible by others (mode 0640); run chmod 600 \(caKey)"])
    }
}
