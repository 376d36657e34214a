#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The two JWTs a client signs for a token endpoint under RFC 7523, each with a fresh
/// random `jti` so the endpoint can refuse a replay.
public enum JWTAssertion {
    /// Long enough to survive clock skew and a slow token request, short enough that a
    /// leaked assertion is soon useless (Google accepts at most an hour).
    public static let defaultLifetime: TimeInterval = 5 * 60

    /// The `assertion` of a JWT-bearer grant (RFC 7523 §2.1, §3): `issuer` is the client
    /// or service account email, `audience` the token endpoint or the audience the IdP
    /// names; `extraClaims` carries e.g. Google's `scope`.
    public static func bearerGrant(
        issuer: String, subject: String? = nil, audience: String, extraClaims: [String: String] = [:],
        key: SigningKey, keyID: String? = nil, now: Date, lifetime: TimeInterval = defaultLifetime
    ) throws -> String {
        let claims = JWTClaimSet(
            issuer: issuer, subject: subject, audience: [audience], issuedAt: now,
            expiresAt: now + lifetime, jwtID: try SecureRandom.urlSafeString(), extra: extraClaims
        )
        return try JWT.sign(claims, with: key, keyID: keyID)
    }

    /// The `client_assertion` of `private_key_jwt` client authentication (RFC 7523 §2.2,
    /// §3): `iss` and `sub` are both the client id, `aud` the token endpoint.
    public static func clientAuthentication(
        clientID: String, tokenEndpoint: String,
        key: SigningKey, keyID: String? = nil, now: Date, lifetime: TimeInterval = defaultLifetime
    ) throws -> String {
        let claims = JWTClaimSet(
            issuer: clientID, subject: clientID, audience: [tokenEndpoint], issuedAt: now,
            expiresAt: now + lifetime, jwtID: try SecureRandom.urlSafeString()
        )
        return try JWT.sign(claims, with: key, keyID: keyID)
    }
}
