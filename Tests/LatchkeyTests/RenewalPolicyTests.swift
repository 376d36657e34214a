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

    // MARK: body matches (`renew_on: [{ status: 401, json: { status_code: 3 } }]`)

    private static func field(_ path: String, _ value: JSONValue) -> JSONFieldMatch {
        JSONFieldMatch(path: try! JSONPath(parsing: path), value: value)
    }

    /// TMDB: 401 with `status_code` 3 is an invalid session; 401 with 7, a bad API key.
    let tmdb = RenewalPolicy(statuses: [], bodyMatches: [RenewalBodyMatch(status: 401, fields: [Self.field("status_code", .number(3))])])

    private func refuses(_ policy: RenewalPolicy, _ body: String, status: Int = 401) -> Bool {
        policy.bodyRefuses(status: status, body: Array(body.utf8))
    }

    @Test func aStatusIsJudgedByItsBodyOnlyWhereAMatchNamesItAndNoPlainEntryDoes() {
        #expect(tmdb.judgesBody(of: 401))
        #expect(!tmdb.judgesBody(of: 403))
        #expect(!RenewalPolicy().judgesBody(of: 401))
        var both = tmdb
        both.statuses = [401]
        #expect(!both.judgesBody(of: 401), "a plain status refuses whatever the body says")
        #expect(both.refuses(status: 401, fields: HTTPFields()))
        #expect(!tmdb.refuses(status: 401, fields: HTTPFields()), "the head alone cannot tell")
    }

    @Test func aBodyHoldingTheFieldsRefusesTheToken() {
        #expect(refuses(tmdb, #"{"success":false,"status_code":3,"status_message":"Authentication failed"}"#))
        #expect(refuses(tmdb, #"{"status_code":3.0}"#), "numbers compare as numbers")
        #expect(!refuses(tmdb, #"{"status_code":7,"status_message":"Invalid API key"}"#))
        #expect(!refuses(tmdb, #"{"status_code":"3"}"#), "a string is not the number")
        #expect(!refuses(tmdb, #"{"other":3}"#))
        #expect(!refuses(tmdb, #"{"status_code":3}"#, status: 403), "another status")
    }

    @Test func aBodyThatIsNotAJSONDocumentOrTooLongMatchesNothing() {
        #expect(!refuses(tmdb, ""))
        #expect(!refuses(tmdb, "status_code: 3"))
        #expect(!refuses(tmdb, #"{"status_code":3"#))
        #expect(!refuses(tmdb, #"[{"status_code":3}]"#))
        let padded = String(repeating: " ", count: RenewalPolicy.bodyReadLimit) + #"{"status_code":3}"#
        #expect(!refuses(tmdb, padded))
    }

    @Test func everyFieldOfOneMatchMustHold() {
        let policy = RenewalPolicy(statuses: [], bodyMatches: [
            RenewalBodyMatch(status: 401, fields: [Self.field("error.code", .string("session_expired")), Self.field("retry", .bool(true))]),
            RenewalBodyMatch(status: 401, fields: [Self.field("errors[0].code", .number(3))]),
        ])
        #expect(refuses(policy, #"{"error":{"code":"session_expired"},"retry":true}"#))
        #expect(!refuses(policy, #"{"error":{"code":"session_expired"},"retry":false}"#))
        #expect(refuses(policy, #"{"errors":[{"code":3}]}"#), "any match of the status")
    }

    @Test func aWholeAnswerRefusesByItsHeadOrItsBody() {
        #expect(tmdb.refuses(status: 401, fields: HTTPFields(), body: Array(#"{"status_code":3}"#.utf8)))
        #expect(!tmdb.refuses(status: 401, fields: HTTPFields(), body: Array(#"{"status_code":7}"#.utf8)))
        #expect(tmdb.refuses(status: 403, fields: challenge, body: []))
    }
}
