import LatchkeyConfig

extension RecipeStepFailure {
    /// The failure as the lifecycle and people get it: the step and its request, what it
    /// got, and what to check in the configuration, in one line:
    ///
    ///     step 'validate_with_login' (POST https://api.themoviedb.org/3/authentication/token/validate_with_login):
    ///     HTTP 401, expected 200; check identities.tmdb-user.secrets.username, identities.tmdb-user.secrets.password
    ///
    /// Never a secret: `redaction` (the identity's secrets, its secret captures and what a
    /// person typed) is removed from all of it. The kind: an answer that may differ later
    /// (no answer, 5xx, 429, 408) is transient, with the server's `Retry-After`; one only
    /// a change of the configuration can help is a misconfiguration naming the key; any
    /// other refusal is rejected. The lifecycle backs off from each as from a token endpoint.
    func acquisitionFailure(at place: RecipeStepPlace, redaction: SecretRedaction) -> AcquisitionFailure {
        let (kind, what, check) = explanation(place, redaction)
        var message = "step '\(place.step)'" + (place.request.map { " (\($0))" } ?? "") + ": " + what
        if let check { message += "; check " + check }
        var retryAfter: Duration?
        if case .status(_, _, let after) = self, kind == .transient { retryAfter = after }
        return AcquisitionFailure(kind, redaction.apply(message), retryAfter: retryAfter)
    }

    private func explanation(_ place: RecipeStepPlace, _ redaction: SecretRedaction) -> (AcquisitionFailure.Kind, String, String?) {
        let provided = place.provided.isEmpty ? nil : place.provided.joined(separator: ", ")
        switch self {
        case .missing(.secret(let name)):
            return (.transient, "the secret \(name) has no value", "identities.\(place.identity).secrets.\(name)")
        case .missing(.credential(let name)):
            return (.transient, "the credential \(name) has no value", "credentials.\(name)")
        case .missing(.capture(let name)):
            return (.misconfigured(configKey: place.configPath), "there is no capture \(name) for {\(name)}", nil)
        case .missing(.prompt(let name)):
            return (.rejected, "{prompts.\(name)} is typed by a person: run `latchkey login \(place.identity)`", nil)
        case .invalidURL:
            return (.misconfigured(configKey: place.configPath + ".request.url"),
                    "the URL is not an absolute http(s) URL, and base_url does not make it one", nil)
        case .invalidHeader(let name):
            return (.rejected, "the value of header \(name) holds a line break or a NUL", place.configPath + ".request.headers")
        case .transport(let error):
            return (.transient, "no answer: \(error)", nil)
        case .status(let status, let expected, let retryAfter):
            let what = "HTTP \(status), expected \(Self.statuses(expected))" + (retryAfter.map { "; it asks to retry after \($0)" } ?? "")
            if Self.isTransient(status: status) { return (.transient, what, nil) }
            let refusesWhoAsks = status == 401 || status == 403
            return (.rejected, what, refusesWhoAsks ? provided ?? place.configPath : place.configPath + " (its request and expect.status)")
        case .notJSON(let mediaType):
            return (.rejected, "the answer is not JSON (\(mediaType ?? "no content type"))", place.configPath + ".request.url")
        case .fieldMismatch(let match, let found):
            let what = found.map { "the answer's \(match.path) is \(Self.describe($0, redaction)), expected \(Self.describe(match.value, redaction))" }
                ?? "the answer has no \(match.path), expected \(Self.describe(match.value, redaction))"
            let expectation = place.configPath + ".expect.json"
            return (.rejected, what, provided.map { "\($0), or \(expectation)" } ?? expectation)
        case .captureMissing(let capture):
            let what = switch capture.source {
            case .json(let path): "the answer has no string, number or boolean at \(path) for capture \(capture.name)"
            case .header(let name): "the answer has no header \(name) for capture \(capture.name)"
            case .cookie(let name): "the answer sets no cookie \(name) for capture \(capture.name)"
            }
            return (.misconfigured(configKey: place.configPath + ".capture." + capture.name), what, nil)
        case .captureUnusable(let capture, let empty):
            // The same request may well get a usable answer later: retried after the back-off.
            let what = empty ? "the answer's value for capture \(capture.name) is empty"
                : "the answer's value for capture \(capture.name) holds a control character, which no request can carry"
            return (.transient, what, nil)
        }
    }

    /// `200`, `200 or 201`, `a 2xx status`.
    private static func statuses(_ expected: Set<Int>) -> String {
        guard !expected.isEmpty else { return "a 2xx status" }
        let sorted = expected.sorted().map(String.init)
        return sorted.count == 1 ? sorted[0] : sorted.dropLast().joined(separator: ", ") + " or " + sorted.last!
    }

    /// Statuses that say "not now" rather than "no": the server is down or overloaded, or
    /// gave up waiting (RFC 9110 §15.5.9, §15.6; RFC 6585 §4).
    static func isTransient(status: Int) -> Bool {
        status >= 500 || status == 429 || status == 408
    }

    /// A JSON value for a message: scalars as they are (strings quoted and cut at 60
    /// characters), `a secret value` for one that holds a secret, and the kind of a
    /// container.
    private static func describe(_ value: JSONValue, _ redaction: SecretRedaction) -> String {
        switch value {
        case .array: return "an array"
        case .object: return "an object"
        case .null: return "null"
        case .string, .number, .integer, .bool:
            let text = value.scalarText ?? ""
            if redaction.reveals(text) { return "a secret value" }
            guard case .string = value else { return text }
            return "\"" + excerpt(text) + "\""
        }
    }

    /// An answer's value as a message quotes it: its first 60 characters.
    static func excerpt(_ text: String) -> String {
        text.count > 60 ? text.prefix(60) + "…" : text
    }
}
