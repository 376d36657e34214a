import Foundation
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyServer
import LatchkeyTestSupport
import LatchkeyTLS
import Logging
import Testing
@testable import Latchkey

/// The TLS listeners' contexts through their life: made at start, made again when a file
/// changes (a broken one leaves the context in use), a local-CA leaf re-minted before it
/// ends. Files made by the openssl command; the clock of the renewal check injected.
@Suite struct ListenerCertificatesTests {
    private let certs: TestCertificates
    private let capture = LogCapture()

    init() throws {
        certs = try TestCertificates()
    }

    private var logger: Logger { Logger(label: "test") { _ in capture } }

    private func config(_ certificate: ListenerTLSConfig.Certificate, store: String? = nil) -> Config {
        Config(listeners: [ListenerConfig(name: "plain", address: .tcp(host: "127.0.0.1", port: 0)),
                           ListenerConfig(name: "secure", address: .tcp(host: "127.0.0.1", port: 0),
                                          tls: ListenerTLSConfig(certificate: certificate))],
               routes: [], store: TokenStoreSettings(directory: store))
    }

    /// Where the listener reads its certificate and key.
    private var live: (cert: String, key: String) { (certs.directory + "/live.pem", certs.directory + "/live.key") }

    /// `from`'s certificate and key at the live paths, each renamed into place as a
    /// deployment tool would.
    private func install(_ from: TestCertificates.Files) throws {
        for (source, target) in [(from.cert, live.cert), (from.key, live.key)] {
            let staged = target + ".new"
            try? FileManager.default.removeItem(atPath: staged)
            try FileManager.default.copyItem(atPath: source, toPath: staged)
            chmod(staged, 0o600)
            _ = rename(staged, target)
        }
    }

    @Test func aReplacedCertificateIsTakenUpAndABrokenOneLeavesTheOneInUse() throws {
        let ca = try certs.authority("ca", commonName: "Test CA")
        try install(try certs.leaf("first", commonName: "first", signedBy: ca))
        let certificates = try ListenerCertificates(config: config(.files(certFile: live.cert, keyFile: live.key)), logger: logger,
                                                    environment: [:])
        #expect(certificates.listeners[0] == nil)
        let tls = try #require(certificates.listeners[1])
        let first = tls.context

        try install(try certs.leaf("second", commonName: "second", signedBy: ca))
        // Files written in the last seconds are left to settle, then taken up once.
        certificates.check()
        #expect(tls.context === first)
        let settled = Date().addingTimeInterval(5)
        certificates.check(now: settled)
        certificates.check(now: settled.addingTimeInterval(1))
        let second = tls.context
        #expect(second !== first)
        #expect(capture.messages.filter { $0.hasPrefix("info tls certificate replaced") && $0.contains("CN=second") }.count == 1)

        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: live.cert))
        certificates.check(now: Date().addingTimeInterval(5))
        certificates.check(now: Date().addingTimeInterval(6))
        #expect(tls.context === second)
        let errors = capture.messages.filter { $0.hasPrefix("error cannot load the listener's new tls certificate") }
        #expect(errors.count == 1)
        #expect(errors.first?.contains(live.cert) == true, "\(errors)")
    }

    @Test func aCertificateThatDoesNotLoadStopsTheStart() throws {
        let broken = certs.directory + "/broken.pem"
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: URL(fileURLWithPath: broken))
        do {
            _ = try ListenerCertificates(config: config(.files(certFile: broken, keyFile: broken)), logger: logger, environment: [:])
            Issue.record("a broken certificate must stop the start")
        } catch {
            #expect(error.description.hasPrefix("listener secure: "))
            #expect(error.description.contains(broken))
        }
    }

    @Test func aLocalCALeafIsMintedAgainBeforeItEnds() throws {
        let store = certs.directory + "/store"
        let start = Date()
        let certificates = try ListenerCertificates(config: config(.localCA, store: store), logger: logger, environment: [:], now: start)
        #expect(FileManager.default.fileExists(atPath: store + "/ca/ca.pem"))
        let tls = try #require(certificates.listeners[1])
        let minted = tls.context

        // Hourly: a leaf with days left is kept.
        certificates.check(now: start.addingTimeInterval(2 * 3600))
        #expect(tls.context === minted)
        // Less than two of its seven days left: another leaf.
        certificates.check(now: start.addingTimeInterval(5.5 * 86_400))
        #expect(tls.context !== minted)
        #expect(capture.messages.contains { $0.hasPrefix("info tls certificate replaced") && $0.contains("CN=localhost") })
    }

    /// Latchkey's own CA renewed by the hourly check: clients must trust a new certificate,
    /// so it is a warning naming the file, and a bundle already written follows.
    @Test func aRenewedLocalCAIsAWarningAndTheBundleFollows() throws {
        let store = certs.directory + "/store"
        let start = Date()
        _ = try ListenerCertificates(config: config(.localCA, store: store), logger: logger, environment: [:], now: start)
        #expect(capture.messages.contains { $0.hasPrefix("info local certificate authority made") && $0.contains(store + "/ca/ca.pem") })
        let caStore = try LocalCA.store(config: config(.localCA, store: store), environment: [:])
        let roots = certs.directory + "/roots.pem"
        try FileManager.default.copyItem(atPath: caStore.certificatePath, toPath: roots)
        let environment = ["SSL_CERT_FILE": roots]
        let first = try String(contentsOfFile: caStore.certificatePath, encoding: .utf8)
        _ = try caStore.writeBundle(authority: try #require(try Certificate.chain(file: caStore.certificatePath, now: nil).first),
                                    environment: environment)

        let renewing = try ListenerCertificates(config: config(.localCA, store: store), logger: logger, environment: environment,
                                                now: start)
        renewing.check(now: start.addingTimeInterval(340 * 86_400))
        #expect(capture.messages.contains { $0.hasPrefix("warning local certificate authority renewed with a new key") })
        let renewed = try String(contentsOfFile: caStore.certificatePath, encoding: .utf8)
        #expect(renewed != first)
        let bundle = try String(contentsOfFile: caStore.bundlePath, encoding: .utf8)
        #expect(bundle.hasSuffix(renewed) && bundle.hasPrefix(first))
    }
}
