import COpenSSL
import LatchkeyTLS

/// Unpredictable bytes from OpenSSL's CSPRNG, for anything an attacker must not guess.
public enum SecureRandom {
    /// `count` bytes from RAND_bytes; throws rather than return weak bytes.
    public static func bytes(count: Int) throws(CryptoError) -> [UInt8] {
        precondition((0...Int(Int32.max)).contains(count), "RAND_bytes takes an int count")
        return try OpenSSLErrorQueue.isolating { () throws(CryptoError) in
            var bytes = [UInt8](repeating: 0, count: count)
            guard RAND_bytes(&bytes, Int32(count)) == 1 else {
                throw CryptoError(.randomUnavailable, detail: "RAND_bytes failed: \(OpenSSLErrors.drainReasons())")
            }
            return bytes
        }
    }

    /// base64url text of `byteCount` random bytes, safe unescaped in URLs and JSON: for
    /// OAuth `state`, OIDC `nonce` and JWT `jti`. The default 32 bytes give 43 characters.
    public static func urlSafeString(byteCount: Int = 32) throws(CryptoError) -> String {
        Base64URL.encode(try bytes(count: byteCount))
    }
}
