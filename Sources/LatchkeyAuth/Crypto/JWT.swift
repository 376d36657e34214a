#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Builds signed JWTs.
public enum JWT {
    /// `claims` signed with `key` as a compact JWS (RFC 7515 §7.1):
    /// base64url(header) "." base64url(payload) "." base64url(signature). Throws
    /// `CryptoError` if signing fails, or `EncodingError` if the claims cannot be encoded.
    public static func sign(_ claims: some Encodable, with key: SigningKey, keyID: String? = nil) throws -> String {
        let encoder = JSONEncoder()
        // Sorted keys make the output stable for tests; unescaped slashes keep URLs in
        // `iss` and `aud` as written.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(JWTHeader(algorithm: key.algorithm, keyID: keyID))
        let payload = try encoder.encode(claims)
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return signingInput + "." + Base64URL.encode(try key.sign(Array(signingInput.utf8)))
    }
}
