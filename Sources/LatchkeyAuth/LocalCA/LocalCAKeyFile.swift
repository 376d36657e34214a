#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyTLS

/// The bytes of `ca.key`: the CA's private key as PKCS#8 PEM, or, when the store has a key,
/// that PEM sealed as the token files are (`SealedDocument`, format `latchkey-ca-key-v1`),
///
///     {"cipher":"aes-256-gcm","ciphertext":"…","format":"latchkey-ca-key-v1","nonce":"…","tag":"…"}
///
/// The seal's additional data names the format and the file, so that a sealed token file
/// copied over `ca.key` does not open.
enum LocalCAKeyFile {
    static let format = "latchkey-ca-key-v1"

    static func encode(_ key: PrivateKey, storeKey: StoreKey?) throws(LocalCAError) -> [UInt8] {
        do {
            var pem = try key.pem()
            guard let storeKey else { return pem }
            defer { StoreKey.wipe(&pem) }
            let sealed = try StoreCipher.seal(pem, additionalData: additionalData, key: storeKey)
            return Array(try JSONEncoder.store.encode(SealedDocument(sealed, format: format)))
        } catch let error as TLSError {
            throw LocalCAError(error)
        } catch {
            throw LocalCAError("cannot seal the local CA's key: \(error)")
        }
    }

    /// The key in `bytes`, read from `path`. A sealed file needs the store key it was sealed
    /// with; a PEM file is read as is, also when a store key is configured (it is sealed
    /// when the CA is next renewed).
    static func decode(_ bytes: [UInt8], path: String, storeKey: StoreKey?) throws(LocalCAError) -> PrivateKey {
        guard bytes.first == UInt8(ascii: "{") else {
            do {
                return try PrivateKey.load(pem: bytes, origin: "CA key file \(path)")
            } catch {
                throw LocalCAError(error)
            }
        }
        guard let document = try? JSONDecoder().decode(SealedDocument.self, from: Data(bytes)), document.format == format,
              document.cipher == StoreEnvelope.cipher, let sealed = document.sealed
        else {
            throw LocalCAError("CA key file \(path) is not a sealed Latchkey CA key; run `latchkey ca rotate` to make a new CA")
        }
        guard let storeKey else {
            throw LocalCAError("CA key file \(path) is encrypted, but no store key is configured; "
                + "set \(StoreKey.environmentVariable), store.key_file or the systemd credential \(StoreKey.credentialName)")
        }
        var pem: [UInt8]
        do {
            pem = try StoreCipher.open(sealed, additionalData: additionalData, key: storeKey)
        } catch {
            throw LocalCAError("CA key file \(path) does not open with the store key from \(storeKey.origin): "
                + "it was sealed with another key or altered; give the key it was sealed with, or run `latchkey ca rotate`")
        }
        defer { StoreKey.wipe(&pem) }
        do {
            return try PrivateKey.load(pem: pem, origin: "CA key file \(path)")
        } catch {
            throw LocalCAError(error)
        }
    }

    private static let additionalData = Array("\(format)\0\(StoreEnvelope.cipher)\0ca.key".utf8)
}
