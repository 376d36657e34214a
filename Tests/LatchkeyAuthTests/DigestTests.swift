import Testing
@testable import LatchkeyAuth

@Suite struct DigestTests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// FIPS 180-2 appendix B.1 and the digest of nothing.
    @Test func knownSHA256Vectors() throws {
        #expect(hex(try Digest.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(try Digest.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// RFC 4231 §4.2 and §4.3 (test cases 1 and 2).
    @Test func knownHMACSHA256Vectors() throws {
        let key = [UInt8](repeating: 0x0b, count: 20)
        #expect(hex(try Digest.hmacSHA256(key: key, Array("Hi There".utf8))) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(hex(try Digest.hmacSHA256(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}
