import Foundation
import Testing
@testable import LatchkeyTLS

@Suite struct TLSIdentityFileTests {
    static let now = CertificateAuthorityTests.now
    static let authority = CertificateAuthorityTests.authority

    /// A leaf minted at `mintedAt`, its chain and key written to a fresh directory.
    struct Files {
        let directory = TemporaryDirectory()
        let certFile: String
        let keyFile: String
        let identity: TLSIdentity

        init(mintedAt: Date = TLSIdentityFileTests.now, keyMode: Int = 0o600) throws {
            identity = try TLSIdentityFileTests.authority.mintLeaf(names: ["app.test"], now: mintedAt)
            certFile = directory.write("fullchain.pem", try identity.chain.flatMap { try $0.pem() }, mode: 0o644)
            keyFile = directory.write("key.pem", try identity.key.pem(), mode: keyMode)
        }
    }

    @Test func aGoodPairLoadsWithItsChain() throws {
        let files = try Files()
        defer { files.directory.remove() }
        let loaded = try TLSIdentity.load(certFile: files.certFile, keyFile: files.keyFile, now: Self.now)
        #expect(loaded.chain.count == 2)
        #expect(loaded.leaf.isSame(as: files.identity.leaf))
        #expect(loaded.chain[1].isSame(as: Self.authority.certificate))
    }

    @Test func aMissingFileIsUnreadable() throws {
        let files = try Files()
        defer { files.directory.remove() }
        let missing = files.directory.path + "/missing.pem"
        #expect(throws: TLSError(.unreadable, "cannot read certificate file \(missing): no such file or directory")) {
            try TLSIdentity.load(certFile: missing, keyFile: files.keyFile, now: Self.now)
        }
        #expect(throws: TLSError(.unreadable, "cannot read key file \(missing): no such file or directory")) {
            try TLSIdentity.load(certFile: files.certFile, keyFile: missing, now: Self.now)
        }
    }

    @Test func aTruncatedCertificateIsMalformed() throws {
        let files = try Files()
        defer { files.directory.remove() }
        let pem = try files.identity.leaf.pem()
        let truncated = files.directory.write("truncated.pem", Array(pem.prefix(pem.count / 2)))
        #expect { try TLSIdentity.load(certFile: truncated, keyFile: files.keyFile, now: Self.now) } throws: { error in
            let error = error as? TLSError
            return error?.kind == .malformed && error?.message.hasPrefix("certificate file \(truncated): a PEM certificate is truncated or corrupted") == true
        }
    }

    @Test func aFileWithoutACertificateIsMalformed() throws {
        let files = try Files()
        defer { files.directory.remove() }
        #expect(throws: TLSError(.malformed, "certificate file \(files.keyFile): no PEM certificate (expected -----BEGIN CERTIFICATE-----)")) {
            try TLSIdentity.load(certFile: files.keyFile, keyFile: files.keyFile, now: Self.now)
        }
    }

    @Test func aKeyFileWithoutAKeyIsMalformed() throws {
        let files = try Files()
        defer { files.directory.remove() }
        let notKey = files.directory.write("not-key.pem", Array("hello\n".utf8))
        #expect { try TLSIdentity.load(certFile: files.certFile, keyFile: notKey, now: Self.now) } throws: { error in
            let error = error as? TLSError
            return error?.kind == .malformed && error?.message.hasPrefix("key file \(notKey): no readable PEM private key") == true
        }
    }

    @Test func anExpiredCertificateNamesTheFileAndTheDate() throws {
        let files = try Files(mintedAt: Self.now.addingTimeInterval(-30 * 86_400))
        defer { files.directory.remove() }
        let end = files.identity.leaf.notAfter.ISO8601Format()
        #expect(throws: TLSError(.expired, "certificate file \(files.certFile): the certificate (CN=app.test) expired on \(end); renew it")) {
            try TLSIdentity.load(certFile: files.certFile, keyFile: files.keyFile, now: Self.now)
        }
    }

    @Test func aCertificateNotYetValidNamesTheFile() throws {
        let files = try Files(mintedAt: Self.now.addingTimeInterval(2 * 3_600))
        defer { files.directory.remove() }
        let start = files.identity.leaf.notBefore.ISO8601Format()
        #expect(throws: TLSError(.notYetValid, "certificate file \(files.certFile): the certificate (CN=app.test) is not valid until \(start); check the clock or the certificate")) {
            try TLSIdentity.load(certFile: files.certFile, keyFile: files.keyFile, now: Self.now)
        }
    }

    @Test func anExpiredIntermediateIsNamedByPosition() throws {
        let files = try Files()
        defer { files.directory.remove() }
        let ended = try CertificateAuthority.make(commonName: "old", lifetime: .seconds(60), now: Self.now.addingTimeInterval(-86_400))
        let chain = files.directory.write("chain.pem", try files.identity.leaf.pem() + ended.certificate.pem())
        #expect { try TLSIdentity.load(certFile: chain, keyFile: files.keyFile, now: Self.now) } throws: { error in
            (error as? TLSError)?.message.hasPrefix("certificate file \(chain): certificate 2 of the chain (CN=old,O=Latchkey) expired on") == true
        }
    }

    @Test func aKeyOfAnotherCertificateIsAMismatch() throws {
        let files = try Files()
        defer { files.directory.remove() }
        let other = files.directory.write("other.key", try PrivateKey.generateP256().pem())
        #expect(throws: TLSError(.keyMismatch, "key file \(other) does not belong to the certificate in \(files.certFile) (CN=app.test); give the key the certificate was issued for")) {
            try TLSIdentity.load(certFile: files.certFile, keyFile: other, now: Self.now)
        }
    }

    @Test(arguments: [0o640, 0o604, 0o644, 0o660])
    func aKeyOthersCanReadIsRefused(_ mode: Int) throws {
        let files = try Files(keyMode: mode)
        defer { files.directory.remove() }
        let shown = "0" + String(mode, radix: 8)
        #expect(throws: TLSError(.notPrivate, "key file \(files.keyFile) is accessible by others (mode \(shown)); run chmod 600 \(files.keyFile)")) {
            try TLSIdentity.load(certFile: files.certFile, keyFile: files.keyFile, now: Self.now)
        }
    }

    @Test func aCAFileNeedsOnlyToParse() throws {
        let files = try Files(mintedAt: Self.now.addingTimeInterval(-30 * 86_400))
        defer { files.directory.remove() }
        #expect(try Certificate.chain(file: files.certFile, now: nil).count == 2)
    }
}
