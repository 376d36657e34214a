import LatchkeyConfig
import Testing
@testable import LatchkeyAuth

/// What a failing step tells people and the lifecycle: the step, what it got, what to
/// check; the kind; never a secret.
@Suite struct RecipeStepFailureTests {
    private let steps = TMDBRecipe.recipe().steps
    private let redaction = TMDBRecipe.values(captures: ["session_id": "sess-secret-1"]).redaction(TMDBRecipe.recipe())

    private func place(_ index: Int, request: String? = nil) -> RecipeStepPlace {
        var place = RecipeStepPlace(identity: TMDBRecipe.identity, step: steps[index], configPath: "identities.tmdb-user.steps[\(index)]")
        place.request = request
        return place
    }

    private let validate = "POST https://api.themoviedb.org/3/authentication/token/validate_with_login"

    /// A step is named by its URL as configured: a secret rendered into the path would be
    /// percent-encoded, past the masking of its plain value.
    @Test func aStepIsShownWithItsPlaceholdersAsWritten() {
        let step = RecipeStep(name: "user", request: RecipeRequest(method: "DELETE", url: TMDBRecipe.template("users/{secrets.username}/sessions?key={credentials.tmdb-key}")))
        #expect(step.shownRequest(baseURL: "https://api.example.com/v1") == "DELETE https://api.example.com/v1/users/{secrets.username}/sessions")
        #expect(steps[1].shownRequest(baseURL: TMDBRecipe.recipe().baseURL) == validate)
    }

    @Test func aWrongPasswordNamesTheStepAndTheSecretsToCheck() {
        let failure = RecipeStepFailure.status(401, expected: [200], retryAfter: nil).acquisitionFailure(at: place(1, request: validate),
                                                                                                        redaction: redaction)
        #expect(failure.kind == .rejected)
        #expect(failure.message == "step 'validate_with_login' (\(validate)): HTTP 401, expected 200; check credentials.tmdb-key, "
            + "identities.tmdb-user.secrets.username, identities.tmdb-user.secrets.password")
    }

    @Test func anotherRefusalPointsAtTheStep() {
        let failure = RecipeStepFailure.status(404, expected: [200, 201], retryAfter: nil).acquisitionFailure(at: place(2), redaction: redaction)
        #expect(failure.kind == .rejected)
        #expect(failure.message == "step 'session': HTTP 404, expected 200 or 201; check identities.tmdb-user.steps[2] (its request and expect.status)")
        let anyStatus = RecipeStepFailure.status(302, expected: [], retryAfter: nil).acquisitionFailure(at: place(2), redaction: redaction)
        #expect(anyStatus.message.contains("HTTP 302, expected a 2xx status"))
    }

    @Test(arguments: [500, 503, 429, 408])
    func anOverloadedServerIsTransientAndItsRetryAfterHonoured(_ status: Int) {
        let failure = RecipeStepFailure.status(status, expected: [200], retryAfter: .seconds(30)).acquisitionFailure(at: place(0), redaction: redaction)
        #expect(failure.kind == .transient)
        #expect(failure.retryAfter == .seconds(30))
        #expect(failure.message == "step 'request_token': HTTP \(status), expected 200; it asks to retry after 30.0 seconds")
    }

    @Test func noAnswerIsTransient() {
        let failure = RecipeStepFailure.transport(AuthHTTPError(.connectFailed, detail: "Connection refused"))
            .acquisitionFailure(at: place(0, request: "GET https://h/x"), redaction: redaction)
        #expect(failure.kind == .transient)
        #expect(failure.message == "step 'request_token' (GET https://h/x): no answer: connectFailed: Connection refused")
    }

    @Test func aFieldThatDoesNotMatchIsNamedWithItsValueUnlessItIsSecret() {
        let mismatch = RecipeStepFailure.fieldMismatch(TMDBRecipe.success, found: .bool(false)).acquisitionFailure(at: place(1), redaction: redaction)
        #expect(mismatch.kind == .rejected)
        #expect(mismatch.message == "step 'validate_with_login': the answer's success is false, expected true; check credentials.tmdb-key, "
            + "identities.tmdb-user.secrets.username, identities.tmdb-user.secrets.password, or identities.tmdb-user.steps[1].expect.json")
        let echoed = RecipeStepFailure.fieldMismatch(TMDBRecipe.success, found: .string(TMDBRecipe.password))
            .acquisitionFailure(at: place(0), redaction: redaction)
        #expect(echoed.message == "step 'request_token': the answer's success is a secret value, expected true; "
            + "check credentials.tmdb-key, or identities.tmdb-user.steps[0].expect.json")
        let capture = RecipeStepFailure.fieldMismatch(TMDBRecipe.success, found: .string("id sess-secret-1")).acquisitionFailure(at: place(0), redaction: redaction)
        #expect(!capture.message.contains("sess-secret-1"))
        let absent = RecipeStepFailure.fieldMismatch(TMDBRecipe.success, found: nil).acquisitionFailure(at: place(2), redaction: redaction)
        #expect(absent.message.hasPrefix("step 'session': the answer has no success, expected true"))
    }

    @Test func anAnswerThatIsNotJSONNamesItsContentType() {
        let failure = RecipeStepFailure.notJSON(mediaType: "text/html").acquisitionFailure(at: place(0), redaction: redaction)
        #expect(failure.kind == .rejected)
        #expect(failure.message == "step 'request_token': the answer is not JSON (text/html); check identities.tmdb-user.steps[0].request.url")
    }

    @Test func aMissingCaptureIsAMisconfigurationOfThatCapture() {
        let failure = RecipeStepFailure.captureMissing(steps[2].captures[0]).acquisitionFailure(at: place(2), redaction: redaction)
        #expect(failure.kind == .misconfigured(configKey: "identities.tmdb-user.steps[2].capture.session_id"))
        #expect(failure.message == "step 'session': the answer has no string, number or boolean at session_id for capture session_id")
        #expect(failure.misconfiguration?.description.hasSuffix("; fix identities.tmdb-user.steps[2].capture.session_id") == true)
    }

    @Test func valuesThatAreMissingSayWhere() {
        let secret = RecipeStepFailure.missing(.secret("password")).acquisitionFailure(at: place(1), redaction: redaction)
        #expect(secret.kind == .transient)
        #expect(secret.message == "step 'validate_with_login': the secret password has no value; check identities.tmdb-user.secrets.password")
        let prompt = RecipeStepFailure.missing(.prompt("otp")).acquisitionFailure(at: place(1), redaction: redaction)
        #expect(prompt.kind == .rejected)
        #expect(prompt.message.contains("run `latchkey login tmdb-user`"))
        let url = RecipeStepFailure.invalidURL.acquisitionFailure(at: place(0), redaction: redaction)
        #expect(url.kind == .misconfigured(configKey: "identities.tmdb-user.steps[0].request.url"))
    }

    @Test func noSecretSurvivesAnywhereInTheMessage() {
        // A URL whose path carried a secret capture (`account/{session_id}`).
        let failure = RecipeStepFailure.status(401, expected: [200], retryAfter: nil)
            .acquisitionFailure(at: place(0, request: "GET https://h/account/sess-secret-1"), redaction: redaction)
        #expect(failure.message.contains("GET https://h/account/[redacted]"))
        for secret in [TMDBRecipe.password, TMDBRecipe.key, TMDBRecipe.username, "sess-secret-1"] {
            #expect(!failure.message.contains(secret))
        }
    }
}
