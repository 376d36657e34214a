import Testing
@testable import LatchkeyAuth

@Suite struct SigningKeySigningTests {
    private let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJsYXRjaGtleSJ9".utf8)

    @Test func rs256SignaturesVerify() throws {
        let pair = TestKeyPair.rsa()
        let signature = try SigningKey(pem: pair.traditionalPEM).sign(message)
        #expect(signature.count == 256)
        #expect(pair.verifies(signature, of: message, as: .rs256))
        #expect(!pair.verifies(signature, of: message + [0x20], as: .rs256), "the verifier accepts anything")
    }

    /// Many signatures, so some r or s is short enough that its JOSE form needs padding.
    @Test func es256SignaturesAreFixedWidthJOSEAndVerify() throws {
        let pair = TestKeyPair.ec()
        let key = try SigningKey(pem: pair.pkcs8PEM)
        for index in 0..<200 {
            let message = self.message + Array("\(index)".utf8)
            let signature = try key.sign(message)
            #expect(signature.count == 64)
            #expect(pair.verifies(signature, of: message, as: .es256))
        }
        let signature = try key.sign(message)
        #expect(!pair.verifies(signature, of: message + [0x20], as: .es256), "the verifier accepts anything")
    }

    /// One key shared by concurrent tasks, as the token refresher will share it.
    @Test(arguments: [JWSAlgorithm.rs256, .es256])
    func oneKeySignsFromManyTasksAtOnce(_ algorithm: JWSAlgorithm) async throws {
        let pair = algorithm == .rs256 ? TestKeyPair.rsa() : TestKeyPair.ec()
        let key = try SigningKey(pem: pair.pkcs8PEM)
        let message = self.message
        let signatures = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<32 { group.addTask { try key.sign(message) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(signatures.count == 32)
        #expect(signatures.allSatisfy { pair.verifies($0, of: message, as: algorithm) })
    }
}
