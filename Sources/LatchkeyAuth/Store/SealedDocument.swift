/// The JSON of a value sealed with the store key: its format tag, the cipher, and the
/// AES-256-GCM nonce, ciphertext and tag in base64url. Token files (`StoreEnvelope`) and
/// the local CA's key (`LocalCAKeyFile`) differ only in the format tag.
struct SealedDocument: Codable {
    var format: String
    var cipher = StoreEnvelope.cipher
    var nonce: String
    var ciphertext: String
    var tag: String

    init(_ sealed: StoreCipher.Sealed, format: String) {
        self.format = format
        nonce = Base64URL.encode(sealed.nonce)
        ciphertext = Base64URL.encode(sealed.ciphertext)
        tag = Base64URL.encode(sealed.tag)
    }

    var sealed: StoreCipher.Sealed? {
        guard let nonce = Base64URL.decode(nonce), let ciphertext = Base64URL.decode(ciphertext), let tag = Base64URL.decode(tag) else { return nil }
        return StoreCipher.Sealed(nonce: nonce, ciphertext: ciphertext, tag: tag)
    }
}
