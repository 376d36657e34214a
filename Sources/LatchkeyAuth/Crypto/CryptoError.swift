/// Why a crypto operation failed. `detail` names the key's origin (a file path, a service
/// account key) and OpenSSL's reason; it never contains key material.
public struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// OpenSSL's random generator could not produce bytes.
        case randomUnavailable
        case digestFailed
        /// A PKCE code verifier that breaks RFC 7636 §4.1.
        case invalidCodeVerifier
        /// A key file that cannot be read.
        case keyFileUnreadable
        /// Text that is not an unencrypted PEM private key.
        case invalidKey
        /// A private key Latchkey cannot sign JWTs with: not RSA or EC, an EC curve other
        /// than P-256, or an RSA key under 2048 bits.
        case unsupportedKey
        /// An explicit algorithm that does not fit the key (ES256 with an RSA key).
        case algorithmMismatch
        case signingFailed
        /// A service account key file without a required field, or not JSON.
        case invalidServiceAccountKey
        case encryptionFailed
        /// An AEAD tag that does not match: another key sealed the data, or it was altered.
        case authenticationFailed
        case decryptionFailed
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }
}
