import LatchkeyConfig

/// Why one step of a recipe did not go through. `RecipeStepFailure+Message` says it to
/// people and tells the lifecycle what it means.
enum RecipeStepFailure: Error, Sendable, Equatable {
    /// A placeholder of the request has no value.
    case missing(RecipeValues.Missing)
    /// The URL is not an absolute http(s) URL, and `base_url` does not make it one.
    case invalidURL
    /// A header's rendered value holds a line break or a NUL (RFC 9110 §5.5).
    case invalidHeader(name: String)
    /// No complete answer.
    case transport(AuthHTTPError)
    /// A status the step does not expect; `Retry-After` when the answer had one.
    case status(Int, expected: Set<Int>, retryAfter: Duration?)
    /// The answer is not JSON, where the step reads JSON.
    case notJSON(mediaType: String?)
    /// A JSON field of the expectation does not hold its value; `found` is what is there.
    case fieldMismatch(JSONFieldMatch, found: JSONValue?)
    /// The answer was accepted but has nothing for this capture.
    case captureMissing(RecipeCapture)
    /// The capture's value is empty, or holds a control character, which no header,
    /// query or cookie could carry.
    case captureUnusable(RecipeCapture, empty: Bool)
}

/// Where a failing step is, for its message.
struct RecipeStepPlace: Sendable, Equatable {
    var identity: String
    var step: String
    /// Its place in the configuration: `identities.tmdb-user.steps[1]`, or
    /// `identities.tmdb-user.logout`.
    var configPath: String
    /// `POST https://host/path`: the method and URL without its query (which may carry an
    /// `api_key`), secrets removed; nil before the URL could be made.
    var request: String?
    /// The keys of the values a person provides that the request renders
    /// (`identities.tmdb-user.secrets.password`, `credentials.tmdb-key`): what a refusal
    /// of the step asks to check.
    var provided: [String]

    init(identity: String, step: RecipeStep, configPath: String) {
        self.identity = identity
        self.step = step.name
        self.configPath = configPath
        request = nil
        provided = step.placeholders.compactMap { part in
            switch part {
            case .secret(let name): "identities.\(identity).secrets.\(name)"
            case .credential(let name): "credentials.\(name)"
            case .prompt(let name): "the value typed for {prompts.\(name)}"
            case .literal, .capture: nil
            }
        }
    }
}
