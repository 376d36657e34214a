import COpenSSL
import LatchkeyTLS

/// A private key that signs JWTs, and the JWS algorithm it signs with.
///
/// `@unchecked Sendable`: this class is the only owner of its EVP_PKEY, nothing changes the
/// key after loading, and OpenSSL 3 lets threads sign with one key at once as long as
/// each signature has its own EVP_MD_CTX, which `sign` creates.
public final class SigningKey: @unchecked Sendable {
    public let algorithm: JWSAlgorithm
    /// The EVP_PKEY, freed in deinit.
    let key: OpaquePointer

    /// Loads an unencrypted PEM private key: PKCS#8 (`BEGIN PRIVATE KEY`), PKCS#1
    /// (`BEGIN RSA PRIVATE KEY`) or SEC 1 (`BEGIN EC PRIVATE KEY`). Without `algorithm`,
    /// an RSA key signs RS256 and an EC P-256 key ES256; with it, the key must fit.
    public convenience init(pem: String, algorithm: JWSAlgorithm? = nil) throws(CryptoError) {
        try self.init(pem: Array(pem.utf8), algorithm: algorithm, origin: "private key")
    }

    /// Loads a PEM private key from a file, as `init(pem:algorithm:)` does; errors name the path.
    public convenience init(pemFile path: String, algorithm: JWSAlgorithm? = nil) throws(CryptoError) {
        let origin = "private key file \(path)"
        try self.init(pem: Array(try KeyFile.read(path, origin: origin)), algorithm: algorithm, origin: origin)
    }

    /// `origin` names where the PEM came from in error messages.
    init(pem: [UInt8], algorithm: JWSAlgorithm?, origin: String) throws(CryptoError) {
        (key, self.algorithm) = try OpenSSLErrorQueue.isolating { () throws(CryptoError) in
            let key = try Self.readPrivateKey(pem, origin: origin)
            do throws(CryptoError) {
                return (key, try Self.algorithm(for: key, requested: algorithm, origin: origin))
            } catch {
                EVP_PKEY_free(key)
                throw error
            }
        }
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// PEM_read_bio_PrivateKey over the bytes. Its password callback refuses, so an
    /// encrypted key fails at once instead of OpenSSL prompting on the terminal.
    private static func readPrivateKey(_ pem: [UInt8], origin: String) throws(CryptoError) -> OpaquePointer {
        guard !pem.isEmpty else { throw CryptoError(.invalidKey, detail: "\(origin) is empty") }
        guard let length = Int32(exactly: pem.count) else {
            throw CryptoError(.invalidKey, detail: "\(origin) is too large to be a private key")
        }
        var askedForPassword: Int32 = 0
        let key = pem.withUnsafeBytes { bytes in
            withUnsafeMutablePointer(to: &askedForPassword) { asked -> OpaquePointer? in
                guard let bio = BIO_new_mem_buf(bytes.baseAddress, length) else { return nil }
                defer { BIO_free(bio) }
                return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, asked in
                    asked?.storeBytes(of: 1, as: Int32.self)
                    return -1
                }, asked)
            }
        }
        if let key { return key }
        if askedForPassword != 0 {
            throw CryptoError(.invalidKey, detail: "\(origin) is encrypted; Latchkey needs it unencrypted")
        }
        throw CryptoError(.invalidKey, detail: "\(origin) is not a PEM private key (\(OpenSSLErrors.drainReasons()))")
    }

    /// The algorithm for this key, or why the key cannot sign (or cannot sign `requested`).
    private static func algorithm(
        for key: OpaquePointer, requested: JWSAlgorithm?, origin: String
    ) throws(CryptoError) -> JWSAlgorithm {
        let fitting: JWSAlgorithm
        if EVP_PKEY_is_a(key, "RSA") == 1 {
            fitting = .rs256
        } else if EVP_PKEY_is_a(key, "EC") == 1 {
            fitting = .es256
        } else {
            throw CryptoError(.unsupportedKey, detail: "\(origin) holds a key of type \(typeName(of: key)); "
                + "JWTs are signed with RSA (RS256) or EC P-256 (ES256)")
        }
        if let requested, requested != fitting {
            throw CryptoError(.algorithmMismatch, detail: "\(requested.rawValue) needs \(requested.keyDescription), "
                + "but \(origin) holds a key of type \(typeName(of: key))")
        }
        switch fitting {
        case .rs256:
            // RFC 7518 §3.3: a key of 2048 bits or larger MUST be used with RS256.
            let bits = EVP_PKEY_get_bits(key)
            guard bits >= 2048 else {
                throw CryptoError(.unsupportedKey, detail: "\(origin) is a \(bits)-bit RSA key; RS256 needs 2048 bits or more")
            }
        case .es256:
            let curve = groupName(of: key)
            guard curve == SN_X9_62_prime256v1 else {
                throw CryptoError(.unsupportedKey, detail: "\(origin) is an EC key on curve \(curve); ES256 needs P-256 (prime256v1)")
            }
        }
        return fitting
    }

    /// OpenSSL's name for the key type (EVP_PKEY_get0_type_name), e.g. "RSA", "EC", "ED25519".
    private static func typeName(of key: OpaquePointer) -> String {
        EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "unknown"
    }

    /// The EC curve's short name (EVP_PKEY_get_group_name), e.g. "prime256v1".
    private static func groupName(of key: OpaquePointer) -> String {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return "unknown" }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
