import Foundation
import Testing
@testable import LatchkeyAuth

@Suite struct ServiceAccountKeyTests {
    /// A key file as Google writes it, with the fields Latchkey ignores too.
    private func keyFile(pem: String, dropping dropped: String? = nil) throws -> String {
        var fields: [String: String] = [
            "type": "service_account",
            "project_id": "latchkey-test",
            "private_key_id": "0123456789abcdef",
            "private_key": pem,
            "client_email": "proxy@latchkey-test.iam.gserviceaccount.com",
            "client_id": "1234567890",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": "https://oauth2.googleapis.com/token",
        ]
        if let dropped { fields[dropped] = nil }
        return String(decoding: try JSONEncoder().encode(fields), as: UTF8.self)
    }

    @Test func parsesAGoogleKeyFile() throws {
        let pair = TestKeyPair.rsa()
        let account = try ServiceAccountKey(json: try keyFile(pem: pair.pkcs8PEM))
        #expect(account.clientEmail == "proxy@latchkey-test.iam.gserviceaccount.com")
        #expect(account.privateKeyID == "0123456789abcdef")
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(account.signingKey.algorithm == .rs256)
        let message = Array("payload".utf8)
        #expect(pair.verifies(try account.signingKey.sign(message), of: message, as: .rs256))
    }

    @Test func privateKeyIDIsOptional() throws {
        let account = try ServiceAccountKey(json: try keyFile(pem: TestKeyPair.ec().pkcs8PEM, dropping: "private_key_id"))
        #expect(account.privateKeyID == nil)
        #expect(account.signingKey.algorithm == .es256)
    }

    @Test func readsAFileAndNamesItInErrors() throws {
        let pem = TestKeyPair.rsa().pkcs8PEM
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("sa.json").path
            try keyFile(pem: pem).write(toFile: path, atomically: true, encoding: .utf8)
            #expect(try ServiceAccountKey(contentsOfFile: path).clientEmail == "proxy@latchkey-test.iam.gserviceaccount.com")
            try keyFile(pem: pem, dropping: "token_uri").write(toFile: path, atomically: true, encoding: .utf8)
            let error = try #require(throws: CryptoError.self) { try ServiceAccountKey(contentsOfFile: path) }
            #expect(error.detail == "service account key file \(path) has no token_uri")
        }
        let missing = try #require(throws: CryptoError.self) { try ServiceAccountKey(contentsOfFile: "/nonexistent/sa.json") }
        #expect(missing.code == .keyFileUnreadable)
        #expect(missing.detail.contains("/nonexistent/sa.json"))
    }

    @Test(arguments: ["type", "private_key", "client_email", "token_uri"])
    func aMissingFieldIsNamed(_ field: String) throws {
        let pem = TestKeyPair.ec().pkcs8PEM
        let error = try #require(throws: CryptoError.self) { try ServiceAccountKey(json: try keyFile(pem: pem, dropping: field)) }
        #expect(error.code == .invalidServiceAccountKey)
        #expect(error.detail == "service account key has no \(field)")
        #expect(pemLines(of: pem, foundIn: error.description).isEmpty)
    }

    @Test func otherShapesAreRefusedWithoutEchoingTheFile() throws {
        let pem = TestKeyPair.ec().pkcs8PEM
        let wrongType = try keyFile(pem: pem).replacingOccurrences(of: "\"service_account\"", with: "\"authorized_user\"")
        let numberEmail = try keyFile(pem: pem).replacingOccurrences(of: "\"proxy@latchkey-test.iam.gserviceaccount.com\"", with: "42")
        let cases = [
            (wrongType, "service account key is of type authorized_user, not service_account"),
            (numberEmail, "service account key: field client_email is not a string"),
            ("[\"\(pem)\"]", "service account key is not a JSON object"),
            (String(try keyFile(pem: pem).dropLast()), "service account key is not a JSON object"),
        ]
        for (json, detail) in cases {
            let error = try #require(throws: CryptoError.self) { try ServiceAccountKey(json: json) }
            #expect(error.code == .invalidServiceAccountKey)
            #expect(error.detail == detail)
            #expect(pemLines(of: pem, foundIn: error.description).isEmpty)
        }
    }

    @Test func aBadPrivateKeyIsBlamedOnThatField() throws {
        let pem = TestKeyPair.ec(curve: "P-384").pkcs8PEM
        let error = try #require(throws: CryptoError.self) { try ServiceAccountKey(json: try keyFile(pem: pem)) }
        #expect(error.code == .unsupportedKey)
        #expect(error.detail.hasPrefix("private_key of service account key is an EC key on curve secp384r1"))
        #expect(pemLines(of: pem, foundIn: error.description).isEmpty)
    }
}
