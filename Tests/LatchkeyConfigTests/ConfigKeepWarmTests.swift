import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// `keep_warm`: the background refresh even for an identity no request uses.
@Suite("Config keep_warm")
struct ConfigKeepWarmTests {
    private let client = "grant: client_credentials, token_url: https://idp.example/token, client_id: cli"

    @Test func offUnlessSaidOn() throws {
        let identities = try ConfigTestSupport.identities("""
              warm: { \(client), keep_warm: true }
              cold: { \(client), keep_warm: false }
              plain: { \(client) }
            """, injected: "warm")
        #expect(identities["warm"]?.keepWarm == true)
        #expect(identities["cold"]?.keepWarm == false)
        #expect(identities["plain"]?.keepWarm == false)
    }

    @Test func aBooleanOnAnIdentityThatRefreshes() {
        let problems = ConfigTestSupport.identityProblems("""
              word: { \(client), keep_warm: always }
              off: { \(client), keep_warm: true, refresh_ahead: 0s }
              kii: { grant: static, token: { value: t }, keep_warm: true }
            """, injected: "word").map(\.description)
        #expect(problems == [
            "test.yaml:2:103: identities.word.keep_warm: invalid value (expected true or false)",
            "test.yaml:3:102: identities.off.keep_warm: refresh_ahead: 0s turns the background refresh off "
                + "(expected keep_warm: false, or refresh_ahead above 0s)",
            "test.yaml:4:57: identities.kii.keep_warm: a static token has no token endpoint (expected only token (and acquire))",
        ])
    }
}
