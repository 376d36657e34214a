import Foundation
import Testing
@testable import LatchkeyAuth

@Suite struct JWTTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000.75)

    @Test(arguments: [JWSAlgorithm.rs256, .es256])
    func headerAndClaimsDecodeBackAndTheSignatureVerifies(_ algorithm: JWSAlgorithm) throws {
        let pair = algorithm == .rs256 ? TestKeyPair.rsa() : TestKeyPair.ec()
        let claims = JWTClaimSet(
            issuer: "https://client.example/", subject: "user-1", audience: ["https://idp.example/token"],
            issuedAt: now, notBefore: now - 10, expiresAt: now + 300, jwtID: "id-1",
            extra: ["scope": "read write"]
        )
        let jwt = try DecodedJWT(JWT.sign(claims, with: SigningKey(pem: pair.pkcs8PEM), keyID: "key-7"))
        #expect(jwt.headerJSON == #"{"alg":"\#(algorithm.rawValue)","kid":"key-7","typ":"JWT"}"#)
        #expect(jwt.claims == [
            "iss": "https://client.example/", "sub": "user-1", "aud": "https://idp.example/token",
            "iat": 1_700_000_000, "nbf": 1_699_999_990, "exp": 1_700_000_300, "jti": "id-1",
            "scope": "read write",
        ])
        #expect(pair.verifies(jwt.signature, of: jwt.signingInput, as: algorithm))
    }

    @Test func optionalPartsAreLeftOutAndSeveralAudiencesAreAnArray() throws {
        let claims = JWTClaimSet(issuer: "c", audience: ["a", "b"], issuedAt: now, expiresAt: now + 60, jwtID: "j")
        let jwt = try DecodedJWT(JWT.sign(claims, with: SigningKey(pem: TestKeyPair.ec().pkcs8PEM)))
        #expect(jwt.header == ["alg": "ES256", "typ": "JWT"])
        #expect(jwt.claims == ["iss": "c", "aud": ["a", "b"], "iat": 1_700_000_000, "exp": 1_700_000_060, "jti": "j"])
    }

    @Test func anExtraClaimCannotReplaceARegisteredOne() throws {
        let claims = JWTClaimSet(issuer: "c", audience: ["a"], issuedAt: now, expiresAt: now, jwtID: "j", extra: ["exp": "never"])
        let key = try SigningKey(pem: TestKeyPair.ec().pkcs8PEM)
        #expect(throws: EncodingError.self) { try JWT.sign(claims, with: key) }
    }
}
