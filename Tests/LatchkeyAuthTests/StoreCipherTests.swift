import Testing
@testable import LatchkeyAuth

@Suite struct StoreCipherTests {
    let plaintext = Array(#"{"token":{"access_token":"a"}}"#.utf8)
    let additionalData = StoreEnvelope.additionalData("podio")

    @Test func sealedBytesOpenWithTheSameKeyAndAdditionalData() throws {
        let key = try testStoreKey()
        let sealed = try StoreCipher.seal(plaintext, additionalData: additionalData, key: key)
        #expect(sealed.nonce.count == 12)
        #expect(sealed.tag.count == 16)
        #expect(sealed.ciphertext.count == plaintext.count)
        #expect(sealed.ciphertext != plaintext)
        #expect(try StoreCipher.open(sealed, additionalData: additionalData, key: key) == plaintext)
    }

    @Test func eachSealHasItsOwnNonce() throws {
        let key = try testStoreKey()
        let first = try StoreCipher.seal(plaintext, additionalData: additionalData, key: key)
        let second = try StoreCipher.seal(plaintext, additionalData: additionalData, key: key)
        #expect(first.nonce != second.nonce)
        #expect(first.ciphertext != second.ciphertext)
    }

    @Test func emptyPlaintextRoundTrips() throws {
        let key = try testStoreKey()
        let sealed = try StoreCipher.seal([], additionalData: additionalData, key: key)
        #expect(try StoreCipher.open(sealed, additionalData: additionalData, key: key) == [])
    }

    @Test func anotherKeyFailsAuthentication() throws {
        let sealed = try StoreCipher.seal(plaintext, additionalData: additionalData, key: try testStoreKey(7))
        let error = try #require(throws: CryptoError.self) { try StoreCipher.open(sealed, additionalData: additionalData, key: try testStoreKey(8)) }
        #expect(error.code == .authenticationFailed)
    }

    enum Tamper: String, CaseIterable {
        case ciphertext, nonce, tag, additionalData
    }

    @Test(arguments: Tamper.allCases)
    func anyAlteredPartFailsAuthentication(_ part: Tamper) throws {
        let key = try testStoreKey()
        var sealed = try StoreCipher.seal(plaintext, additionalData: additionalData, key: key)
        var additional = additionalData
        switch part {
        case .ciphertext: sealed.ciphertext[3] ^= 0x01
        case .nonce: sealed.nonce[0] ^= 0x80
        case .tag: sealed.tag[15] ^= 0x01
        case .additionalData: additional = StoreEnvelope.additionalData("kii")
        }
        let error = try #require(throws: CryptoError.self) { try StoreCipher.open(sealed, additionalData: additional, key: key) }
        #expect(error.code == .authenticationFailed)
    }

    @Test func aShortNonceOrTagIsRefusedBeforeOpenSSL() throws {
        let key = try testStoreKey()
        var sealed = try StoreCipher.seal(plaintext, additionalData: additionalData, key: key)
        sealed.tag.removeLast()
        let error = try #require(throws: CryptoError.self) { try StoreCipher.open(sealed, additionalData: additionalData, key: key) }
        #expect(error.code == .decryptionFailed)
    }
}
