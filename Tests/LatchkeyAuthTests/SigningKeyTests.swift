import COpenSSL
import Foundation
import Testing
@testable import LatchkeyAuth

@Suite struct SigningKeyTests {
    private func loadError(_ pem: String, algorithm: JWSAlgorithm? = nil) throws -> CryptoError {
        let error = try #require(throws: CryptoError.self) { try SigningKey(pem: pem, algorithm: algorithm) }
        #expect(pemLines(of: pem, foundIn: error.description).isEmpty, "the error quotes the key")
        #expect(ERR_peek_error() == 0, "the OpenSSL error queue was left with entries")
        return error
    }

    @Test func everyPEMFormLoadsWithTheAlgorithmItsKeyFits() throws {
        let rsa = TestKeyPair.rsa()
        let ec = TestKeyPair.ec()
        #expect(rsa.pkcs8PEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(rsa.traditionalPEM.hasPrefix("-----BEGIN RSA PRIVATE KEY-----"))
        #expect(ec.traditionalPEM.hasPrefix("-----BEGIN EC PRIVATE KEY-----"))
        #expect(try SigningKey(pem: rsa.pkcs8PEM).algorithm == .rs256)
        #expect(try SigningKey(pem: rsa.traditionalPEM).algorithm == .rs256)
        #expect(try SigningKey(pem: ec.pkcs8PEM).algorithm == .es256)
        #expect(try SigningKey(pem: ec.traditionalPEM).algorithm == .es256)
        #expect(try SigningKey(pem: rsa.pkcs8PEM, algorithm: .rs256).algorithm == .rs256)
        #expect(try SigningKey(pem: ec.traditionalPEM, algorithm: .es256).algorithm == .es256)
        #expect(ERR_peek_error() == 0)
    }

    @Test func loadsFromAFile() throws {
        let ec = TestKeyPair.ec()
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("key.pem").path
            try ec.pkcs8PEM.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(try SigningKey(pemFile: path).algorithm == .es256)
        }
    }

    @Test func aMissingFileIsNamedWithTheReason() throws {
        let error = try #require(throws: CryptoError.self) { try SigningKey(pemFile: "/nonexistent/key.pem") }
        #expect(error.code == .keyFileUnreadable)
        #expect(error.detail == "cannot read private key file /nonexistent/key.pem: No such file or directory")
    }

    @Test func aFileThatIsNotAKeyIsNamedWithoutQuotingIt() throws {
        let rsa = TestKeyPair.rsa()
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("public.pem").path
            try rsa.publicPEM.write(toFile: path, atomically: true, encoding: .utf8)
            let error = try #require(throws: CryptoError.self) { try SigningKey(pemFile: path) }
            #expect(error.code == .invalidKey)
            #expect(error.detail.hasPrefix("private key file \(path) is not a PEM private key ("))
            #expect(pemLines(of: rsa.publicPEM, foundIn: error.description).isEmpty)
        }
    }

    @Test func garbageAndPublicKeysAreNotPrivateKeys() throws {
        let garbage = "-----BEGIN PRIVATE KEY-----\nTm90IGEga2V5IGF0IGFsbCwganVzdCB0ZXh0IHRoYXQgbG9va3MgbGlrZSBvbmU=\n-----END PRIVATE KEY-----\n"
        for pem in [garbage, "not a key", "", TestKeyPair.ec().publicPEM] {
            let error = try loadError(pem)
            #expect(error.code == .invalidKey)
        }
        let error = try loadError(garbage)
        #expect(error.detail.contains("error:"), "OpenSSL's reason is missing: \(error.detail)")
    }

    @Test func anEncryptedKeyIsRefusedWithoutAPrompt() throws {
        let pem = TestKeyPair.rsa().encryptedPEM
        #expect(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        let error = try loadError(pem)
        #expect(error.code == .invalidKey)
        #expect(error.detail == "private key is encrypted; Latchkey needs it unencrypted")
    }

    @Test func anExplicitAlgorithmMustFitTheKey() throws {
        let onRSA = try loadError(TestKeyPair.rsa().pkcs8PEM, algorithm: .es256)
        #expect(onRSA.code == .algorithmMismatch)
        #expect(onRSA.detail == "ES256 needs an EC P-256 key, but private key holds a key of type RSA")
        let onEC = try loadError(TestKeyPair.ec().traditionalPEM, algorithm: .rs256)
        #expect(onEC.code == .algorithmMismatch)
        #expect(onEC.detail == "RS256 needs an RSA key, but private key holds a key of type EC")
    }

    @Test func curvesOtherThanP256AreRefused() throws {
        for pem in [TestKeyPair.ec(curve: "P-384").pkcs8PEM, TestKeyPair.ec(curve: "secp256k1").traditionalPEM] {
            let error = try loadError(pem)
            #expect(error.code == .unsupportedKey)
            #expect(error.detail.contains("ES256 needs P-256"))
        }
        let explicit = try loadError(TestKeyPair.ec(curve: "P-384").pkcs8PEM, algorithm: .es256)
        #expect(explicit.detail == "private key is an EC key on curve secp384r1; ES256 needs P-256 (prime256v1)")
    }

    @Test func otherKeyTypesAndShortRSAKeysAreRefused() throws {
        let ed25519 = try loadError(TestKeyPair.ed25519().pkcs8PEM)
        #expect(ed25519.code == .unsupportedKey)
        #expect(ed25519.detail.contains("type ED25519"))
        // RFC 7518 §3.3.
        let short = try loadError(TestKeyPair.rsa(bits: 1024).pkcs8PEM)
        #expect(short.code == .unsupportedKey)
        #expect(short.detail == "private key is a 1024-bit RSA key; RS256 needs 2048 bits or more")
    }
}
