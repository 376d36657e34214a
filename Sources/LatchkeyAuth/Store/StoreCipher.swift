import COpenSSL
import LatchkeyTLS

/// AES-256-GCM (NIST SP 800-38D) through OpenSSL's EVP interface: the token store's seal.
/// The additional data is authenticated, not encrypted: it binds a sealed file to its
/// format and its identity, so that a file moved to another identity's name fails to open.
enum StoreCipher {
    /// SP 800-38D §8.2.2: 96-bit nonces, random for each message. At the store's rate of
    /// writes the 2^-32 collision bound of §8.3 is never approached.
    static let nonceBytes = 12
    /// SP 800-38D §5.2.1.2: the full 128-bit tag.
    static let tagBytes = 16

    struct Sealed: Equatable, Sendable {
        var nonce: [UInt8]
        var ciphertext: [UInt8]
        var tag: [UInt8]
    }

    static func seal(_ plaintext: [UInt8], additionalData: [UInt8], key: StoreKey) throws(CryptoError) -> Sealed {
        let nonce = try SecureRandom.bytes(count: nonceBytes)
        return try OpenSSLErrorQueue.isolating { () throws(CryptoError) in
            let context = try Context(.encryptionFailed)
            var ciphertext = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
            var tag = [UInt8](repeating: 0, count: tagBytes)
            let sealed = try key.withUnsafeBytes { key throws(CryptoError) -> Int? in
                guard EVP_EncryptInit_ex(context.pointer, EVP_aes_256_gcm(), nil, key.baseAddress, nonce) == 1 else { return nil }
                var length: Int32 = 0, total = 0
                if !additionalData.isEmpty {
                    guard EVP_EncryptUpdate(context.pointer, nil, &length, additionalData, try int32(additionalData.count)) == 1 else { return nil }
                }
                if !plaintext.isEmpty {
                    guard EVP_EncryptUpdate(context.pointer, &ciphertext, &length, plaintext, try int32(plaintext.count)) == 1 else { return nil }
                    total = Int(length)
                }
                let finished = ciphertext.withUnsafeMutableBufferPointer { EVP_EncryptFinal_ex(context.pointer, $0.baseAddress! + total, &length) }
                guard finished == 1 else { return nil }
                total += Int(length)
                guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_GET_TAG, Int32(tagBytes), &tag) == 1 else { return nil }
                return total
            }
            guard let sealed else {
                throw CryptoError(.encryptionFailed, detail: "AES-256-GCM encryption failed: \(OpenSSLErrors.drainReasons())")
            }
            return Sealed(nonce: nonce, ciphertext: Array(ciphertext.prefix(sealed)), tag: tag)
        }
    }

    /// The plaintext, or `.authenticationFailed` when the tag does not match (another key,
    /// another identity's additional data, or altered bytes: GCM cannot tell which).
    static func open(_ sealed: Sealed, additionalData: [UInt8], key: StoreKey) throws(CryptoError) -> [UInt8] {
        guard sealed.nonce.count == nonceBytes, sealed.tag.count == tagBytes else {
            throw CryptoError(.decryptionFailed, detail: "AES-256-GCM needs a \(nonceBytes)-byte nonce and a \(tagBytes)-byte tag")
        }
        return try OpenSSLErrorQueue.isolating { () throws(CryptoError) in
            let context = try Context(.decryptionFailed)
            var plaintext = [UInt8](repeating: 0, count: sealed.ciphertext.count + tagBytes)
            defer { StoreKey.wipe(&plaintext) }
            var tag = sealed.tag
            let outcome = try key.withUnsafeBytes { key throws(CryptoError) -> Opening in
                guard EVP_DecryptInit_ex(context.pointer, EVP_aes_256_gcm(), nil, key.baseAddress, sealed.nonce) == 1 else { return .failed }
                var length: Int32 = 0, total = 0
                if !additionalData.isEmpty {
                    guard EVP_DecryptUpdate(context.pointer, nil, &length, additionalData, try int32(additionalData.count)) == 1 else { return .failed }
                }
                if !sealed.ciphertext.isEmpty {
                    guard EVP_DecryptUpdate(context.pointer, &plaintext, &length, sealed.ciphertext, try int32(sealed.ciphertext.count)) == 1 else { return .failed }
                    total = Int(length)
                }
                guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tagBytes), &tag) == 1 else { return .failed }
                // EVP_DecryptFinal_ex is where GCM compares the tag.
                let final = plaintext.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(context.pointer, $0.baseAddress! + total, &length) }
                return final == 1 ? .opened(total + Int(length)) : .tagMismatch
            }
            switch outcome {
            case .opened(let count): return Array(plaintext.prefix(count))
            case .tagMismatch: throw CryptoError(.authenticationFailed, detail: "the AES-256-GCM tag does not match")
            case .failed: throw CryptoError(.decryptionFailed, detail: "AES-256-GCM decryption failed: \(OpenSSLErrors.drainReasons())")
            }
        }
    }

    private enum Opening {
        case opened(Int)
        case tagMismatch
        case failed
    }

    private static func int32(_ count: Int) throws(CryptoError) -> Int32 {
        guard let value = Int32(exactly: count) else { throw CryptoError(.encryptionFailed, detail: "more than 2 GiB to seal") }
        return value
    }

    /// One EVP_CIPHER_CTX, freed when the operation ends.
    private final class Context {
        let pointer: OpaquePointer

        init(_ code: CryptoError.Code) throws(CryptoError) {
            guard let pointer = EVP_CIPHER_CTX_new() else {
                throw CryptoError(code, detail: "EVP_CIPHER_CTX_new failed: \(OpenSSLErrors.drainReasons())")
            }
            self.pointer = pointer
        }

        deinit { EVP_CIPHER_CTX_free(pointer) }
    }
}
