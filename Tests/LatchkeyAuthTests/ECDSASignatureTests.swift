import Testing
@testable import LatchkeyAuth

@Suite struct ECDSASignatureTests {
    /// DER drops leading zeros; the JOSE form must put them back.
    @Test func shortCoordinatesAreLeftPadded() throws {
        let r = [UInt8](repeating: 0, count: 31) + [0x01]
        let s = [UInt8](repeating: 0, count: 2) + [UInt8](repeating: 0xFF, count: 30)
        let der = TestKeyPair.der(fromJOSE: r + s)
        #expect(der.count < 64)
        #expect(try ECDSASignature.jose(fromDER: der, coordinateWidth: 32) == r + s)
    }

    @Test func fullWidthCoordinatesRoundTrip() throws {
        let jose = [UInt8](repeating: 0xC3, count: 32) + [UInt8](repeating: 0x7A, count: 32)
        #expect(try ECDSASignature.jose(fromDER: TestKeyPair.der(fromJOSE: jose), coordinateWidth: 32) == jose)
    }

    @Test func refusesWhatDoesNotFit() throws {
        let wide = TestKeyPair.der(fromJOSE: [UInt8](repeating: 0xFF, count: 66))
        let tooWide = try #require(throws: CryptoError.self) { try ECDSASignature.jose(fromDER: wide, coordinateWidth: 32) }
        #expect(tooWide.code == .signingFailed)
        let garbage = try #require(throws: CryptoError.self) { try ECDSASignature.jose(fromDER: [0x30, 0x03, 0x02], coordinateWidth: 32) }
        #expect(garbage.code == .signingFailed)
    }
}
