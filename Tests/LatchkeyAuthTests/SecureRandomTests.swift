import Testing
@testable import LatchkeyAuth

@Suite struct SecureRandomTests {
    @Test func givesTheBytesAskedFor() throws {
        #expect(try SecureRandom.bytes(count: 0).isEmpty)
        #expect(try SecureRandom.bytes(count: 1000).count == 1000)
    }

    @Test func neverRepeats() throws {
        let draws = try (0..<100).map { _ in try SecureRandom.bytes(count: 16) }
        #expect(Set(draws).count == draws.count)
    }

    @Test func urlSafeStringsAreBase64URLOfTheRequestedBytes() throws {
        let text = try SecureRandom.urlSafeString()
        #expect(text.utf8.count == 43)
        #expect(Base64URL.decode(text)?.count == 32)
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(text.allSatisfy(alphabet.contains))
        #expect(try SecureRandom.urlSafeString(byteCount: 16).utf8.count == 22)
        #expect(try SecureRandom.urlSafeString() != text)
    }
}
