extension ConfigSyntax {
    /// The name of a capture, secret or prompt of a recipe: what a template's placeholder
    /// can name (no dot, which separates `credentials.`, `secrets.` and `prompts.` from it).
    static func isRecipeName(_ name: String) -> Bool {
        isName(name) && !name.contains(".")
    }

    static let recipeNameExpectation = "letters, digits, '-' or '_', at most 64 characters"

    /// A recipe step's URL: absolute (http or https), or relative to the identity's
    /// `base_url`, which RFC 3986 §5.2 joins it to. Placeholders may stand in its path, not
    /// in an absolute URL's scheme or host, so that no answer can choose where a later
    /// step sends its secrets. Its parameters belong under `query:`.
    static func recipeStepURL(_ template: RecipeTemplate, hasBaseURL: Bool) -> Failure? {
        let expected = "an http or https URL, or a path relative to base_url such as authentication/token/new"
        // The text with each placeholder as a plain character, for the checks of its shape.
        let probe = template.parts.map { part in
            if case .literal(let text) = part { text } else { "x" }
        }.joined()
        if probe.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            return Failure("URL contains spaces or control characters", expected: expected)
        }
        if probe.contains("?") || probe.contains("#") {
            return Failure("URL with a query or fragment", expected: "the URL's parameters under query:")
        }
        guard hasScheme(probe) else {
            if !hasBaseURL { return Failure("a relative URL without base_url", expected: "an absolute http or https URL, or base_url on the identity") }
            // `//host/path` would replace base_url's host.
            if probe.hasPrefix("//") { return Failure("a relative URL naming a host", expected: expected) }
            return nil
        }
        if template.parts.count > 1 {
            guard case .literal(let head)? = template.parts.first, let authority = head.firstRange(of: "://"),
                  head[authority.upperBound...].contains("/") else {
                return Failure("a placeholder in the URL's scheme or host", expected: "a fixed scheme and host; placeholders only in the path")
            }
        }
        if case .failure(let failure) = upstreamURL(probe) { return failure }
        return nil
    }

    /// RFC 3986 §3.1: `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`, then ':'.
    private static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        let scheme = text[..<colon].utf8
        guard let first = scheme.first, first.isASCIILetter else { return false }
        return scheme.allSatisfy { $0.isASCIILetter || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || "+-.".utf8.contains($0) }
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool {
        (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "z")) || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z"))
    }
}
