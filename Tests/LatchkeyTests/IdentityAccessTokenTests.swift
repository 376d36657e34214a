import Foundation
import LatchkeyAuth
import Logging
import LatchkeyTestSupport
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct IdentityAccessTokenTests {
    @Test func aPrintedTokenLastsPastTheRefreshMarginAndNothingRefreshesInTheBackground() {
        let printing = IdentityAccessToken.printing(TokenTiming(clockSkew: .seconds(30), refreshAhead: .seconds(60)))
        #expect(printing == TokenTiming(clockSkew: .seconds(90), refreshAhead: .zero))
        let token = TokenSet(accessToken: "a", expiresAt: Date(timeIntervalSince1970: 10_000), obtainedAt: Date(timeIntervalSince1970: 0))
        #expect(printing.usableUntil(token) == Date(timeIntervalSince1970: 9_910))
        #expect(printing.refreshAt(token) == nil)
    }

    @Test func aStaticIdentityGivesItsConfiguredToken() async throws {
        let config = try ConfigTestSupport.load("""
            identities:
              kii: { grant: static, token: { env: KII_TOKEN } }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        let client = try AuthHTTPClient()
        defer { client.shutdown() }
        let request = try IdentityAccessToken(identity: config.identities[0], client: client, store: MemoryTokenStore(),
                                              logger: Logger(label: "test"), environment: ["KII_TOKEN": "kii-token"])
        #expect(await request.current().map(\.accessToken) == .success("kii-token"))
        #expect(throws: ConfigErrors.self) {
            try IdentityAccessToken(identity: config.identities[0], client: client, store: MemoryTokenStore(),
                                    logger: Logger(label: "test"), environment: [:])
        }
    }
}
