import COpenSSL
import COpenSSLShims

/// The ring as OpenSSL's session-ticket key callback (SSL_CTX_set_tlsext_ticket_key_evp_cb):
/// the context's ex_data slot 0 (its "app data") holds the ring, unretained: the context
/// keeps the ring alive as long as the SSL_CTX.
extension TicketKeyRing {
    func install(on context: OpaquePointer) -> Bool {
        SSL_CTX_set_ex_data(context, 0, Unmanaged.passUnretained(self).toOpaque())
        return SSL_CTX_set_tlsext_ticket_key_evp_cb(context) { ssl, name, iv, cipher, mac, encrypt in
            guard let ssl, let name, let iv, let cipher, let mac,
                let slot = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), 0) else { return -1 }
            let ring = Unmanaged<TicketKeyRing>.fromOpaque(slot).takeUnretainedValue()
            let nameBuffer = UnsafeMutableRawBufferPointer(start: name, count: TicketKeyRing.nameLength)
            let ivBuffer = UnsafeMutableRawBufferPointer(start: iv, count: Int(EVP_MAX_IV_LENGTH))
            return encrypt == 1
                ? ring.sealTicket(name: nameBuffer, iv: ivBuffer, cipher: cipher, mac: mac)
                : ring.openTicket(name: UnsafeRawBufferPointer(nameBuffer), iv: UnsafeRawBufferPointer(ivBuffer), cipher: cipher, mac: mac)
        } == 1
    }

    /// A new ticket: name and a random IV written out, cipher and MAC keyed. 1, or -1 on error.
    private func sealTicket(name: UnsafeMutableRawBufferPointer, iv: UnsafeMutableRawBufferPointer, cipher: OpaquePointer, mac: OpaquePointer) -> Int32 {
        let key = encryptionKey(at: .now)
        let ivLength = Int32(EVP_CIPHER_get_iv_length(EVP_aes_256_cbc()))
        guard RAND_bytes(iv.baseAddress?.assumingMemoryBound(to: UInt8.self), ivLength) == 1 else { return -1 }
        name.copyBytes(from: key.name)
        return key.cipherKey.withUnsafeBufferPointer { cipherKey in
            EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), nil, cipherKey.baseAddress, iv.baseAddress?.assumingMemoryBound(to: UInt8.self))
        } == 1 && Self.setMACKey(key, on: mac) ? 1 : -1
    }

    /// A presented ticket: 1 to accept, 2 to accept and renew (the previous key), 0 for an
    /// unknown or retired key (a full handshake), -1 on error.
    private func openTicket(name: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer, cipher: OpaquePointer, mac: OpaquePointer) -> Int32 {
        let found: Int32
        let key: Key
        switch decryptionKey(named: name, at: .now) {
        case .current(let current): (found, key) = (1, current)
        case .previous(let previous): (found, key) = (2, previous)
        case .unknown: return 0
        }
        return key.cipherKey.withUnsafeBufferPointer { cipherKey in
            EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), nil, cipherKey.baseAddress, iv.baseAddress?.assumingMemoryBound(to: UInt8.self))
        } == 1 && Self.setMACKey(key, on: mac) ? found : -1
    }

    /// EVP_MAC_CTX_set_params: HMAC with SHA-256 and the key's MAC key.
    private static func setMACKey(_ key: Key, on mac: OpaquePointer) -> Bool {
        key.macKey.withUnsafeBytes { macKey in
            OSSL_MAC_PARAM_KEY.withCString { keyName in
                OSSL_MAC_PARAM_DIGEST.withCString { digestName in
                    "SHA256".withCString { digest in
                        var params = [
                            OSSL_PARAM_construct_octet_string(keyName, UnsafeMutableRawPointer(mutating: macKey.baseAddress), macKey.count),
                            OSSL_PARAM_construct_utf8_string(digestName, UnsafeMutablePointer(mutating: digest), 0),
                            OSSL_PARAM_construct_end(),
                        ]
                        return EVP_MAC_CTX_set_params(mac, &params) == 1
                    }
                }
            }
        }
    }
}
