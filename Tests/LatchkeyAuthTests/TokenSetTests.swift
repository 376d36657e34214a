import Foundation
import Testing
@testable import LatchkeyAuth

@Suite struct TokenSetTests {
    @Test func keepsWhatItIsGiven() {
        let now = Date(timeIntervalSince1970: 1_000)
        let token = TokenSet(accessToken: "a", refreshToken: "r", expiresAt: now.addingTimeInterval(60), obtainedAt: now)
        #expect(token.tokenType == "Bearer")
        #expect(token.expiresAt!.timeIntervalSince(token.obtainedAt) == 60)
    }
}
