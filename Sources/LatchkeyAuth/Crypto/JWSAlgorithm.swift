/// The JWS algorithms Latchkey signs with (RFC 7518 §3.1): the two that token endpoints
/// accept for `private_key_jwt` and JWT-bearer assertions.
public enum JWSAlgorithm: String, Sendable, Codable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256.
    case es256 = "ES256"

    /// The key this algorithm needs, as error messages name it.
    var keyDescription: String {
        switch self {
        case .rs256: "an RSA key"
        case .es256: "an EC P-256 key"
        }
    }
}
