/// The JOSE header of a JWT Latchkey signs (RFC 7515 §4.1, RFC 7519 §5.1).
struct JWTHeader: Encodable {
    var algorithm: JWSAlgorithm
    var type = "JWT"
    /// Which of the issuer's keys signed, for IdPs that hold several (a service account's
    /// `private_key_id`).
    var keyID: String?

    private enum CodingKeys: String, CodingKey {
        case algorithm = "alg"
        case type = "typ"
        case keyID = "kid"
    }
}
