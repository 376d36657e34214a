import Foundation
import Testing
@testable import LatchkeyAuth

@Suite struct JWTAssertionTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func bearerGrantAssertion() throws {
        let pair = TestKeyPair.rsa()
        let key = try SigningKey(pem: pair.pkcs8PEM)
        let token = try JWTAssertion.bearerGrant(
            issuer: "proxy@project.iam.gserviceaccount.com", subject: "admin@example.com",
            audience: "https://oauth2.googleapis.com/token", extraClaims: ["scope": "https://www.googleapis.com/auth/drive"],
            key: key, keyID: "abc", now: now
        )
        let jwt = try DecodedJWT(token)
        #expect(jwt.header == ["alg": "RS256", "typ": "JWT", "kid": "abc"])
        let jti = try #require(jwt.claims["jti"])
        #expect(jwt.claims == [
            "iss": "proxy@project.iam.gserviceaccount.com", "sub": "admin@example.com",
            "aud": "https://oauth2.googleapis.com/token", "scope": "https://www.googleapis.com/auth/drive",
            "iat": 1_700_000_000, "exp": 1_700_000_300, "jti": jti,
        ])
        #expect(pair.verifies(jwt.signature, of: jwt.signingInput, as: .rs256))
        let again = try DecodedJWT(JWTAssertion.bearerGrant(issuer: "i", audience: "a", key: key, now: now, lifetime: 60))
        #expect(again.claims["jti"] != jti, "jti repeats")
        #expect(again.claims["exp"] == 1_700_000_060)
        #expect(again.claims["sub"] == nil)
    }

    @Test func clientAssertionForPrivateKeyJWT() throws {
        let pair = TestKeyPair.ec()
        let token = try JWTAssertion.clientAuthentication(
            clientID: "latchkey-client", tokenEndpoint: "https://idp.example/oauth2/token",
            key: SigningKey(pem: pair.traditionalPEM), now: now
        )
        let jwt = try DecodedJWT(token)
        #expect(jwt.header == ["alg": "ES256", "typ": "JWT"])
        let jti = try #require(jwt.claims["jti"])
        #expect(jwt.claims == [
            "iss": "latchkey-client", "sub": "latchkey-client", "aud": "https://idp.example/oauth2/token",
            "iat": 1_700_000_000, "exp": 1_700_000_300, "jti": jti,
        ])
        #expect(pair.verifies(jwt.signature, of: jwt.signingInput, as: .es256))
    }
}
