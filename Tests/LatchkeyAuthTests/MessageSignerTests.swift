import Testing
@testable import LatchkeyAuth

@Suite struct MessageSignerTests {
    private let old = MessageSigner(key: Array(repeating: 1, count: 32))
    private let rotated = MessageSigner(key: Array(repeating: 2, count: 32), previous: [Array(repeating: 1, count: 32)])

    @Test func signedValuesVerifyAndKeepTheirPayload() throws {
        let signed = try old.sign("v1.1700000000.a.b")
        #expect(signed.hasPrefix("v1.1700000000.a.b."))
        #expect(old.verify(signed) == "v1.1700000000.a.b")
    }

    @Test func alteredPayloadsAndMACsAreRefused() throws {
        let signed = try old.sign("user=alice")
        #expect(old.verify(signed.replacingOccurrences(of: "alice", with: "admin")) == nil)
        #expect(old.verify(String(signed.dropLast())) == nil)
        #expect(old.verify("user=alice") == nil)
        #expect(old.verify(".abc") == nil)
        #expect(old.verify("") == nil)
    }

    @Test func anotherKeysValuesAreRefused() throws {
        let stranger = MessageSigner(key: Array(repeating: 3, count: 32))
        #expect(stranger.verify(try old.sign("x")) == nil)
    }

    @Test func aRotatedSignerAcceptsThePreviousKeysValuesAndSignsWithTheNewKey() throws {
        let before = try old.sign("session")
        #expect(rotated.verify(before) == "session")
        let after = try rotated.sign("session")
        #expect(after != before)
        #expect(old.verify(after) == nil)
    }
}
