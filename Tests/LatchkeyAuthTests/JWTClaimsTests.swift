import Foundation
import Testing
@testable import LatchkeyAuth

@Suite struct JWTClaimsTests {
    private func jwt(_ payload: String) -> String {
        Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + ".sig"
    }

    @Test func readsExp() {
        #expect(JWTClaims.expiry(of: jwt(#"{"sub":"a","exp":1700000000}"#)) == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func opaqueOrExpLessTokensHaveNoExpiry() {
        #expect(JWTClaims.expiry(of: "opaque-token") == nil)
        #expect(JWTClaims.expiry(of: jwt(#"{"sub":"a"}"#)) == nil)
        #expect(JWTClaims.expiry(of: "a.!!!.c") == nil)
    }

    @Test func base64URLRoundTripsEveryLength() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.decode("a") == nil)
    }
}
