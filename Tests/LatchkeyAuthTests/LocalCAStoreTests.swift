import COpenSSL
import Foundation
import LatchkeyConfig
import LatchkeyTLS
import Testing
@testable import LatchkeyAuth

@Suite struct LocalCAStoreTests {
    static let now = Date(timeIntervalSince1970: 1_780_000_000)

    static func storeKey() throws -> StoreKey {
        var text = Array(Data(repeating: 7, count: 32).base64EncodedString().utf8)
        return try StoreKey(text: &text, origin: "test")
    }

    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    @Test func theFirstOpenMakesTheCAWithPrivateKeyAndPublicCertificate() throws {
        let directory = try TemporaryDirectory()
        let store = try LocalCAStore(storeDirectory: directory.appending("state"), storeKey: nil)
        let (made, outcome) = try store.loadOrMake(now: Self.now)
        #expect(outcome == .made)
        #expect(store.certificatePath == directory.appending("state/ca/ca.pem"))
        #expect(try Self.mode(directory.appending("state")) == 0o700)
        #expect(try Self.mode(store.directory) == 0o700)
        #expect(try Self.mode(store.certificatePath) == 0o644)
        #expect(try Self.mode(store.keyPath) == 0o600)
        #expect(made.certificate.subject.hasPrefix("CN=Latchkey local CA ("))
        #expect(made.certificate.subject.hasSuffix("),O=Latchkey"))
        #expect(made.certificate.notAfter == Self.now.addingTimeInterval(365 * 86_400))
        // Unsealed without a store key: the key file is PEM.
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: store.keyPath)), as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))

        let (loaded, again) = try store.loadOrMake(now: Self.now.addingTimeInterval(300 * 86_400))
        #expect(again == .loaded)
        #expect(loaded.certificate.isSame(as: made.certificate))
        #expect(loaded.certificate.matches(made.key))
    }

    @Test func lessThanThirtyDaysLeftRenewsWithANewKey() throws {
        let directory = try TemporaryDirectory()
        let store = try LocalCAStore(storeDirectory: directory.path, storeKey: nil)
        let (made, _) = try store.loadOrMake(now: Self.now)
        let late = Self.now.addingTimeInterval(336 * 86_400)
        let (renewed, outcome) = try store.loadOrMake(now: late)
        #expect(outcome == .renewed)
        #expect(!renewed.certificate.isSame(as: made.certificate))
        #expect(!renewed.certificate.matches(made.key))
        #expect(renewed.certificate.notAfter == late.addingTimeInterval(365 * 86_400))
    }

    @Test func rotateReplacesTheCANow() throws {
        let directory = try TemporaryDirectory()
        let store = try LocalCAStore(storeDirectory: directory.path, storeKey: nil)
        let (made, _) = try store.loadOrMake(now: Self.now)
        let rotated = try store.rotate(now: Self.now)
        #expect(!rotated.certificate.isSame(as: made.certificate))
        let (loaded, outcome) = try store.loadOrMake(now: Self.now)
        #expect(outcome == .loaded)
        #expect(loaded.certificate.isSame(as: rotated.certificate))
    }

    @Test func withAStoreKeyTheCAKeyIsSealedAndOpensOnlyWithIt() throws {
        let directory = try TemporaryDirectory()
        let key = try Self.storeKey()
        let store = try LocalCAStore(storeDirectory: directory.path, storeKey: key)
        let (made, _) = try store.loadOrMake(now: Self.now)
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: store.keyPath)), as: UTF8.self)
        #expect(text.contains("\"format\":\"latchkey-ca-key-v1\"") && text.contains("\"cipher\":\"aes-256-gcm\""))
        #expect(!text.contains("PRIVATE KEY"))
        let (loaded, outcome) = try LocalCAStore(storeDirectory: directory.path, storeKey: key).loadOrMake(now: Self.now)
        #expect(outcome == .loaded)
        #expect(loaded.certificate.matches(made.key))

        #expect(throws: LocalCAError("CA key file \(store.keyPath) is encrypted, but no store key is configured; "
            + "set LATCHKEY_STORE_KEY, store.key_file or the systemd credential latchkey-store-key")) {
            try LocalCAStore(storeDirectory: directory.path, storeKey: nil).loadOrMake(now: Self.now)
        }
        var other = Array(Data(repeating: 9, count: 32).base64EncodedString().utf8)
        let otherKey = try StoreKey(text: &other, origin: "another")
        #expect { try LocalCAStore(storeDirectory: directory.path, storeKey: otherKey).loadOrMake(now: Self.now) } throws: { error in
            (error as? LocalCAError)?.message.hasPrefix("CA key file \(store.keyPath) does not open with the store key from another") == true
        }
    }

    @Test func aKeyOthersCanReadIsRefused() throws {
        let directory = try TemporaryDirectory()
        let store = try LocalCAStore(storeDirectory: directory.path, storeKey: nil)
        _ = try store.loadOrMake(now: Self.now)
        chmod(store.keyPath, 0o644)
        #expect(throws: LocalCAError("CA key file \(store.keyPath) is accessible by others (mode 0644); run chmod 600 \(store.keyPath)")) {
            try store.loadOrMake(now: Self.now)
        }
    }

    @Test func aMissingOrForeignKeyAsksForARotation() throws {
        let directory = try TemporaryDirectory()
        let store = try LocalCAStore(storeDirectory: directory.path, storeKey: nil)
        _ = try store.loadOrMake(now: Self.now)
        let foreign = try PrivateKey.generateP256().pem()
        try Data(foreign).write(to: URL(fileURLWithPath: store.keyPath))
        #expect(throws: LocalCAError("CA key file \(store.keyPath) does not belong to \(store.certificatePath); run `latchkey ca rotate` to make a new CA")) {
            try store.loadOrMake(now: Self.now)
        }
        try FileManager.default.removeItem(atPath: store.keyPath)
        #expect(throws: LocalCAError("CA key file \(store.keyPath) is missing beside \(store.certificatePath); run `latchkey ca rotate` to make a new CA")) {
            try store.loadOrMake(now: Self.now)
        }
        #expect(try store.rotate(now: Self.now).certificate.matches(try store.loadOrMake(now: Self.now).authority.key))
    }

    @Test func theBundleHoldsTheSystemRootsThenTheCA() throws {
        let directory = try TemporaryDirectory()
        let store = try LocalCAStore(storeDirectory: directory.path, storeKey: nil)
        let (made, _) = try store.loadOrMake(now: Self.now)
        let roots = try CertificateAuthority.make(commonName: "Some root", lifetime: .seconds(86_400), now: Self.now).certificate
        let rootsFile = directory.appending("roots.pem")
        try Data(try roots.pem()).write(to: URL(fileURLWithPath: rootsFile))
        let path = try store.writeBundle(authority: made.certificate, environment: ["SSL_CERT_FILE": rootsFile])
        #expect(path == store.bundlePath)
        #expect(try Self.mode(path) == 0o644)
        let bundle = try Certificate.chain(file: path, now: nil)
        #expect(bundle.count == 2 && bundle[0].isSame(as: roots) && bundle[1].isSame(as: made.certificate))
        #expect(throws: LocalCAError("cannot read the system's trusted roots: cannot read certificate file /nonexistent: no such file or directory "
            + "(set SSL_CERT_FILE to the file that holds them)")) {
            try store.writeBundle(authority: made.certificate, environment: ["SSL_CERT_FILE": "/nonexistent"])
        }
    }

    @Test func execBundlesAreNamedByTheirRootsAndHoldTheCAOnce() throws {
        let directory = try TemporaryDirectory()
        let store = try LocalCAStore(storeDirectory: directory.path, storeKey: try Self.storeKey())
        let (made, _) = try store.loadOrMake(now: Self.now)
        let rootsFile = directory.appending("roots.pem"), otherFile = directory.appending("other.pem")
        let roots = try CertificateAuthority.make(commonName: "Some root", lifetime: .seconds(86_400), now: Self.now).certificate
        let other = try CertificateAuthority.make(commonName: "Other root", lifetime: .seconds(86_400), now: Self.now).certificate
        try Data(try roots.pem()).write(to: URL(fileURLWithPath: rootsFile))
        try Data(try other.pem()).write(to: URL(fileURLWithPath: otherFile))
        let first = try store.writeBundleForExec(authority: made.certificate, environment: ["SSL_CERT_FILE": rootsFile])
        let second = try store.writeBundleForExec(authority: made.certificate, environment: ["SSL_CERT_FILE": otherFile])
        #expect(first != second && first.hasPrefix(store.directory + "/bundle-") && first.hasSuffix(".pem"))
        #expect(try store.writeBundleForExec(authority: made.certificate, environment: ["SSL_CERT_FILE": rootsFile]) == first)
        // An earlier bundle as the roots (a nested exec): the same file, the CA still once.
        #expect(try store.writeBundleForExec(authority: made.certificate, environment: ["SSL_CERT_FILE": first]) == first)
        let bundle = try Certificate.chain(file: first, now: nil)
        #expect(bundle.count == 2 && bundle[0].isSame(as: roots) && bundle[1].isSame(as: made.certificate))
        #expect(try Certificate.chain(file: second, now: nil)[0].isSame(as: other))
    }

    @Test func aLeafMintedByTheStoredCAVerifiesAgainstCaPem() throws {
        let directory = try TemporaryDirectory()
        let store = try LocalCAStore(storeDirectory: directory.path, storeKey: try Self.storeKey())
        let (authority, _) = try store.loadOrMake(now: Self.now)
        let leaf = try authority.mintLeaf(names: ["localhost", "127.0.0.1"], now: Self.now)
        let trusted = try Certificate.chain(file: store.certificatePath, now: nil)[0]
        let storeHandle = X509_STORE_new()!
        defer { X509_STORE_free(storeHandle) }
        X509_STORE_add_cert(storeHandle, trusted.x509)
        let context = X509_STORE_CTX_new()!
        defer { X509_STORE_CTX_free(context) }
        X509_STORE_CTX_init(context, storeHandle, leaf.leaf.x509, nil)
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), time_t(Self.now.timeIntervalSince1970))
        X509_VERIFY_PARAM_set1_ip_asc(X509_STORE_CTX_get0_param(context), "127.0.0.1")
        #expect(X509_verify_cert(context) == 1)
    }
}

@Suite struct LocalCATests {
    static let now = LocalCAStoreTests.now

    @Test func withoutCaSettingsTheStoreDirectoryKeepsLatchkeysOwn() throws {
        let directory = try TemporaryDirectory()
        let config = Config(listeners: [], routes: [], store: TokenStoreSettings(kind: .memory, directory: directory.path))
        let opened = try LocalCA.open(config: config, environment: [:], now: Self.now)
        #expect(opened.outcome == .made)
        #expect(opened.certificatePath == directory.appending("ca/ca.pem"))
        #expect(opened.keyPath == directory.appending("ca/ca.key"))
        #expect(try LocalCA.open(config: config, environment: [:], now: Self.now).authority.certificate.isSame(as: opened.authority.certificate))
    }

    @Test func theUsersCAIsLoadedAsIsAndNeverWritten() throws {
        let directory = try TemporaryDirectory()
        let made = try CertificateAuthority.make(commonName: "Mine", lifetime: .seconds(86_400), now: Self.now)
        let certFile = directory.appending("my-ca.pem"), keyFile = directory.appending("my-ca.key")
        try Data(try made.certificate.pem()).write(to: URL(fileURLWithPath: certFile))
        try Data(try made.key.pem()).write(to: URL(fileURLWithPath: keyFile))
        chmod(keyFile, 0o600)
        var config = Config(listeners: [], routes: [], store: TokenStoreSettings(directory: directory.appending("state")))
        config.ca = CertificateAuthoritySettings(certFile: certFile, keyFile: keyFile)
        let opened = try LocalCA.open(config: config, environment: [:], now: Self.now)
        #expect(opened.store == nil && opened.certificatePath == certFile && opened.keyPath == keyFile)
        #expect(opened.authority.certificate.isSame(as: made.certificate))
        #expect(!FileManager.default.fileExists(atPath: directory.appending("state/ca")))

        chmod(keyFile, 0o640)
        #expect(throws: LocalCAError("key file \(keyFile) is accessible by others (mode 0640); run chmod 600 \(keyFile)")) {
            try LocalCA.open(config: config, environment: [:], now: Self.now)
        }
    }

    @Test func aLeafIsNotACA() throws {
        let directory = try TemporaryDirectory()
        let made = try CertificateAuthority.make(commonName: "Mine", lifetime: .seconds(86_400), now: Self.now)
        let leaf = try made.mintLeaf(names: ["app.test"], now: Self.now)
        let certFile = directory.appending("leaf.pem"), keyFile = directory.appending("leaf.key")
        try Data(try leaf.leaf.pem()).write(to: URL(fileURLWithPath: certFile))
        try Data(try leaf.key.pem()).write(to: URL(fileURLWithPath: keyFile))
        chmod(keyFile, 0o600)
        #expect(throws: LocalCAError("certificate file \(certFile) (CN=app.test) is not a CA certificate "
            + "(it needs basicConstraints CA:TRUE to sign the listeners' certificates)")) {
            try LocalCA.userAuthority(CertificateAuthoritySettings(certFile: certFile, keyFile: keyFile), now: Self.now)
        }
    }
}
