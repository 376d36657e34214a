import COpenSSL
@testable import LatchkeyAuth

/// A key pair generated for one test with OpenSSL, written out in the PEM forms a user
/// might bring, and checking signatures on its own rather than through `SigningKey`.
final class TestKeyPair {
    let key: OpaquePointer

    static func rsa(bits: Int32 = 2048) -> TestKeyPair {
        TestKeyPair(type: "RSA") { EVP_PKEY_CTX_set_rsa_keygen_bits($0, bits) }
    }

    static func ec(curve: String = "P-256") -> TestKeyPair {
        TestKeyPair(type: "EC") { EVP_PKEY_CTX_set_group_name($0, curve) }
    }

    static func ed25519() -> TestKeyPair {
        TestKeyPair(type: "ED25519") { _ in 1 }
    }

    /// EVP_PKEY_Q_keygen is variadic, so the long way: context, init, parameters, generate.
    private init(type: String, parameters: (OpaquePointer) -> Int32) {
        let context = EVP_PKEY_CTX_new_from_name(nil, type, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        precondition(EVP_PKEY_keygen_init(context) == 1 && parameters(context) == 1
            && EVP_PKEY_generate(context, &key) == 1, "\(type) key generation failed")
        self.key = key!
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// PKCS#8: `BEGIN PRIVATE KEY`.
    var pkcs8PEM: String {
        pem { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
    }

    /// The algorithm's own form: `BEGIN RSA PRIVATE KEY` (PKCS#1), `BEGIN EC PRIVATE KEY` (SEC 1).
    var traditionalPEM: String {
        pem { PEM_write_bio_PrivateKey_traditional($0, key, nil, nil, 0, nil, nil) }
    }

    /// `BEGIN ENCRYPTED PRIVATE KEY`, AES-256-CBC under "passphrase".
    var encryptedPEM: String {
        pem { PEM_write_bio_PKCS8PrivateKey($0, key, EVP_aes_256_cbc(), "passphrase", 10, nil, nil) }
    }

    /// `BEGIN PUBLIC KEY`: a key, but not one that can sign.
    var publicPEM: String {
        pem { PEM_write_bio_PUBKEY($0, key) }
    }

    /// EVP_DigestVerify with SHA-256; a JOSE r||s signature is turned back into DER first.
    func verifies(_ signature: [UInt8], of message: [UInt8], as algorithm: JWSAlgorithm) -> Bool {
        let verifiable = algorithm == .es256 ? Self.der(fromJOSE: signature) : signature
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        defer { ERR_clear_error() }
        return EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1
            && EVP_DigestVerify(context, verifiable, verifiable.count, message, message.count) == 1
    }

    /// r||s (two equal halves) as a DER ECDSA-Sig-Value, written by OpenSSL (i2d_ECDSA_SIG).
    static func der(fromJOSE jose: [UInt8]) -> [UInt8] {
        let half = jose.count / 2
        let r = BN_bin2bn(Array(jose[..<half]), Int32(half), nil)
        let s = BN_bin2bn(Array(jose[half...]), Int32(half), nil)
        let signature = ECDSA_SIG_new()
        defer { ECDSA_SIG_free(signature) }
        precondition(ECDSA_SIG_set0(signature, r, s) == 1)
        var der = [UInt8](repeating: 0, count: Int(i2d_ECDSA_SIG(signature, nil)))
        der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_ECDSA_SIG(signature, &cursor)
        }
        return der
    }

    private func pem(_ write: (OpaquePointer) -> Int32) -> String {
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        precondition(write(bio) == 1, "PEM writing failed")
        var text = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        precondition(BIO_read(bio, &text, Int32(text.count)) == Int32(text.count))
        return String(decoding: text, as: UTF8.self)
    }
}

/// The lines of `pem` that appear in `text`. Lines under 16 characters (a short final
/// base64 line) are skipped: they could match by chance and reveal nothing.
func pemLines(of pem: String, foundIn text: String) -> [Substring] {
    pem.split(separator: "\n").filter { $0.count >= 16 && text.contains($0) }
}
