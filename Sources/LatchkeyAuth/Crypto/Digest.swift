import COpenSSL
import LatchkeyTLS

/// Message digests through OpenSSL's EVP interface.
public enum Digest {
    /// The 32-byte SHA-256 of `bytes` (EVP_Digest with EVP_sha256).
    public static func sha256(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        try OpenSSLErrorQueue.isolating { () throws(CryptoError) in
            var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            guard EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil) == 1 else {
                throw CryptoError(.digestFailed, detail: "SHA-256 failed: \(OpenSSLErrors.drainReasons())")
            }
            return Array(digest.prefix(Int(length)))
        }
    }

    /// The 32-byte HMAC-SHA256 of `message` under `key` (RFC 2104; OpenSSL's one-shot HMAC
    /// with EVP_sha256).
    public static func hmacSHA256(key: [UInt8], _ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try OpenSSLErrorQueue.isolating { () throws(CryptoError) in
            var mac = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            guard HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &mac, &length) != nil else {
                throw CryptoError(.digestFailed, detail: "HMAC-SHA256 failed: \(OpenSSLErrors.drainReasons())")
            }
            return Array(mac.prefix(Int(length)))
        }
    }
}
