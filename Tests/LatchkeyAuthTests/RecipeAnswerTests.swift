import Foundation
import LatchkeyConfig
import LatchkeyHTTP
import Testing
@testable import LatchkeyAuth

/// A step's answer checked and its captures taken; cookies and captured times read. No
/// sockets.
@Suite struct RecipeAnswerTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let steps = TMDBRecipe.recipe().steps

    private func json(_ status: Int, _ body: String, _ fields: HTTPFields = ["Content-Type": "application/json"]) -> AuthHTTPResponse {
        AuthHTTPResponse(status: status, fields: fields, body: Array(body.utf8))
    }

    private func path(_ text: String) -> JSONPath { try! JSONPath(parsing: text) }

    @Test func anAcceptedAnswerGivesItsCaptures() throws {
        let answer = json(200, #"{"success":true,"expires_at":"2016-08-26 17:04:39 UTC","request_token":"rt-9"}"#)
        #expect(try steps[0].read(answer, now: now) == ["request_token": "rt-9"])
        #expect(try steps[1].read(json(200, #"{"success":true}"#), now: now) == [:])
    }

    @Test func capturesComeFromJSONPathsHeadersAndCookies() throws {
        let step = RecipeStep(name: "s", request: RecipeRequest(method: "GET", url: TMDBRecipe.template("x")), captures: [
            RecipeCapture(name: "id", source: .json(path("$.items[1].id"))),
            RecipeCapture(name: "count", source: .json(path("data.count"))),
            RecipeCapture(name: "flag", source: .json(path("data.ok"))),
            RecipeCapture(name: "session", source: .header("x-session")),
            RecipeCapture(name: "sid", source: .cookie("sid")),
        ])
        var fields: HTTPFields = ["Content-Type": "application/json", "X-Session": "hs-1"]
        fields.append(name: "Set-Cookie", value: "theme=dark; Path=/")
        fields.append(name: "Set-Cookie", value: " sid = c-1; HttpOnly; Secure")
        let answer = json(201, #"{"items":[{"id":"a"},{"id":7}],"data":{"count":2.5,"ok":false}}"#, fields)
        #expect(try step.read(answer, now: now) == ["id": "7", "count": "2.5", "flag": "false", "session": "hs-1", "sid": "c-1"])
    }

    @Test func aStatusNotExpectedFailsWithItsRetryAfter() throws {
        var fields: HTTPFields = ["Content-Type": "application/json"]
        fields.append(name: "Retry-After", value: "30")
        #expect(throws: RecipeStepFailure.status(503, expected: [200], retryAfter: .seconds(30))) {
            try steps[0].read(json(503, "{}", fields), now: now)
        }
        // Without statuses, any 2xx.
        let any2xx = RecipeStep(name: "s", request: RecipeRequest(method: "GET", url: TMDBRecipe.template("x")))
        #expect(try any2xx.read(AuthHTTPResponse(status: 204), now: now) == [:])
        #expect(throws: RecipeStepFailure.status(302, expected: [], retryAfter: nil)) { try any2xx.read(AuthHTTPResponse(status: 302), now: now) }
    }

    @Test func aFieldThatDoesNotHoldFailsWithWhatItHolds() {
        #expect(throws: RecipeStepFailure.fieldMismatch(TMDBRecipe.success, found: .bool(false))) {
            try steps[1].read(json(200, #"{"success":false,"status_code":30}"#), now: now)
        }
        #expect(throws: RecipeStepFailure.fieldMismatch(TMDBRecipe.success, found: nil)) {
            try steps[1].read(json(200, #"{"status_code":30}"#), now: now)
        }
    }

    @Test func anAnswerThatIsNotJSONIsNamedByItsContentType() throws {
        #expect(throws: RecipeStepFailure.notJSON(mediaType: "text/html")) {
            try steps[0].read(json(200, "<html>maintenance</html>", ["Content-Type": "text/html; charset=utf-8"]), now: now)
        }
        // JSON is read whatever the content type says.
        #expect(try steps[0].read(json(200, #"{"success":true,"request_token":"t"}"#, ["Content-Type": "text/plain"]), now: now)
            == ["request_token": "t"])
    }

    @Test func aCaptureTheAnswerLacksFails() {
        let capture = steps[0].captures[0]
        #expect(throws: RecipeStepFailure.captureMissing(capture)) { try steps[0].read(json(200, #"{"success":true}"#), now: now) }
        // An object is not a value a template can carry.
        #expect(throws: RecipeStepFailure.captureMissing(capture)) {
            try steps[0].read(json(200, #"{"success":true,"request_token":{"a":1}}"#), now: now)
        }
    }

    @Test func setCookieIsReadAsAUserAgentReadsIt() {
        let cookie = SetCookie("sid=abc; Path=/; HttpOnly", now: now)
        #expect(cookie?.name == "sid" && cookie?.value == "abc" && cookie?.removes == false)
        #expect(SetCookie("sid=a=b=c", now: now)?.value == "a=b=c")
        #expect(SetCookie("sid=\"quoted\"", now: now)?.value == "\"quoted\"")
        #expect(SetCookie("sid=; Max-Age=0", now: now)?.removes == true)
        #expect(SetCookie("sid=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT", now: now)?.removes == true)
        // Max-Age wins over Expires.
        #expect(SetCookie("sid=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=60", now: now)?.removes == false)
        #expect(SetCookie("novalue", now: now) == nil)
        #expect(SetCookie("=x", now: now) == nil)
    }

    @Test func theLastSetCookieOfANameWins() {
        var fields = HTTPFields()
        fields.append(name: "Set-Cookie", value: "sid=old")
        fields.append(name: "Set-Cookie", value: "sid=new")
        #expect(SetCookie.value(named: "sid", in: fields, now: now) == "new")
        fields.append(name: "Set-Cookie", value: "sid=; Max-Age=0")
        #expect(SetCookie.value(named: "sid", in: fields, now: now) == nil)
        #expect(SetCookie.value(named: "other", in: fields, now: now) == nil)
    }

    @Test(arguments: [
        ("2016-08-26 17:04:39 UTC", 1_472_231_079.0),
        ("2016-08-26T17:04:39Z", 1_472_231_079.0),
        ("2016-08-26t17:04:39z", 1_472_231_079.0),
        ("2016-08-26T19:04:39+02:00", 1_472_231_079.0),
        ("2016-08-26T17:04:39.25Z", 1_472_231_079.25),
        ("1472231079", 1_472_231_079.0),
    ])
    func capturedTimesAreRead(_ text: String, _ seconds: Double) {
        #expect(CapturedTime.parse(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: ["soon", "2016-08-26", "2016-13-26T17:04:39Z", "2016-08-26T17:04:39", "2016-08-26T17:04:39+2", "", "-5"])
    func otherTextIsNoTime(_ text: String) {
        #expect(CapturedTime.parse(text) == nil)
    }

    @Test func theExpiryComesFromALifetimeOrACapture() throws {
        let identity = TMDBRecipe.config()
        let redaction = SecretRedaction(values: ["s3cr3t"])
        func expiry(_ expiry: RecipeExpiry, _ captures: [String: String]) throws(AcquisitionFailure) -> Date? {
            try expiry.expiresAt(captures: captures, now: now, identity: identity, redaction: redaction)
        }
        #expect(try expiry(.never, [:]) == nil)
        #expect(try expiry(.lifetime(.seconds(3600)), [:]) == now.addingTimeInterval(3600))
        #expect(try expiry(.capturedSeconds("ttl"), ["ttl": "90"]) == now.addingTimeInterval(90))
        #expect(try expiry(.capturedTime("until"), ["until": "2024-01-01 00:00:00 UTC"]) == Date(timeIntervalSince1970: 1_704_067_200))
        let wrong = #expect(throws: AcquisitionFailure.self) { try expiry(.capturedSeconds("ttl"), ["ttl": "soon"]) }
        #expect(wrong?.kind == .misconfigured(configKey: "identities.tmdb-user.expires_in"))
        #expect(wrong?.message == #"capture ttl holds "soon", not a number of seconds"#)
        let secret = #expect(throws: AcquisitionFailure.self) { try expiry(.capturedTime("until"), ["until": "s3cr3t"]) }
        #expect(secret?.kind == .misconfigured(configKey: "identities.tmdb-user.expires_at"))
        #expect(secret?.message.contains("s3cr3t") == false)
        let absent = #expect(throws: AcquisitionFailure.self) { try expiry(.capturedTime("until"), [:]) }
        #expect(absent?.message.hasPrefix("capture until holds nothing") == true)
    }

    /// A result expired on arrival would make the recipe run again at once, and again: it
    /// is a failure, retried after the back-off. One far in the future is kept in range.
    @Test func anExpiryInThePastFailsAndOneFarAwayIsBounded() throws {
        let identity = TMDBRecipe.config()
        func expiry(_ expiry: RecipeExpiry, _ captures: [String: String]) throws(AcquisitionFailure) -> Date? {
            try expiry.expiresAt(captures: captures, now: now, identity: identity, redaction: SecretRedaction(values: []))
        }
        for (kind, captures) in [(RecipeExpiry.capturedSeconds("ttl"), ["ttl": "0"]), (.capturedSeconds("ttl"), ["ttl": "-5"]),
                                 (.capturedTime("ttl"), ["ttl": "2016-08-26 17:04:39 UTC"])] {
            let past = #expect(throws: AcquisitionFailure.self) { try expiry(kind, captures) }
            #expect(past?.kind == .transient)
            #expect(past?.message.contains("has expired already") == true)
        }
        let longest = now.addingTimeInterval(RecipeExpiry.longest)
        #expect(try expiry(.capturedSeconds("ttl"), ["ttl": "1e20"]) == longest)
        #expect(try expiry(.capturedTime("ttl"), ["ttl": "1e15"]) == longest)
    }

    /// An empty value, or one with a control character, cannot be sent: the step fails.
    @Test func anEmptyCaptureOrOneWithAControlCharacterFails() {
        let capture = steps[0].captures[0]
        #expect(throws: RecipeStepFailure.captureUnusable(capture, empty: true)) {
            try steps[0].read(json(200, #"{"success":true,"request_token":""}"#), now: now)
        }
        #expect(throws: RecipeStepFailure.captureUnusable(capture, empty: false)) {
            try steps[0].read(json(200, #"{"success":true,"request_token":"a\r\nX-Injected: 1"}"#), now: now)
        }
    }
}
