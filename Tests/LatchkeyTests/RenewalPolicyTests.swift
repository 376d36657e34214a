import LatchkeyHTTP
import LatchkeyConfig
import Testing
@testable import Latchkey

/// Which upstream answers make a route renew its identity's token and replay.
@Suite struct RenewalPolicyTests {
    let challenge: HTTPFields = ["WWW-Authenticate": #"Bearer realm="api", error="invalid_token""#]

    @Test func configuredStatusesRefuseWhateverTheirFields() {
        let policy = RenewalPolicy(statuses: [401, 419])
        #expect(policy.refuses(status: 401, fields: HTTPFields()))
        #expect(policy.refuses(status: 419, fields: HTTPFields()))
        #expect(!policy.refuses(status: 403, fields: HTTPFields()))
    }

    /// RFC 6750 §3.1: some APIs answer an invalid token with 400 or 403 and the challenge.
    @Test func anInvalidTokenChallengeRefusesOnAnErrorStatusOnly() {
        let policy = RenewalPolicy()
        #expect(policy.refuses(status: 403, fields: challenge))
        #expect(policy.refuses(status: 400, fields: ["WWW-Authenticate": "bearer error=invalid_token"]))
        #expect(!policy.refuses(status: 200, fields: challenge), "a served request is never replayed")
        #expect(!policy.refuses(status: 403, fields: ["WWW-Authenticate": #"Bearer error="insufficient_scope""#]))
        #expect(!RenewalPolicy(onInvalidTokenChallenge: false).refuses(status: 403, fields: challenge))
    }
}
