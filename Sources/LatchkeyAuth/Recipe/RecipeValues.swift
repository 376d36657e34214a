import LatchkeyConfig

/// What a recipe's templates are rendered from while it runs: the identity's secrets (a
/// snapshot of the credential store, where `IdentityConfig.secretEntries` put them), the
/// captures made so far, and the values a person typed at `latchkey login`.
struct RecipeValues: Sendable {
    /// A placeholder with nothing to put in its place.
    enum Missing: Error, Sendable, Equatable {
        case capture(String)
        case secret(String)
        case credential(String)
        case prompt(String)
    }

    let identity: String
    let secrets: CredentialSnapshot
    var captures: [String: String]
    var answers: [String: String]
    /// The captures that are secret (all but `secret: false`).
    let secretCaptures: Set<String>

    init(identity: String, recipe: Recipe, secrets: CredentialSnapshot, captures: [String: String] = [:], answers: [String: String] = [:]) {
        self.identity = identity
        self.secrets = secrets
        self.captures = captures
        self.answers = answers
        secretCaptures = recipe.secretCaptures
    }

    /// The value of one placeholder; the text itself for a literal.
    func value(of part: RecipeTemplate.Part) throws(Missing) -> String {
        switch part {
        case .literal(let text):
            return text
        case .capture(let name):
            guard let value = captures[name] else { throw .capture(name) }
            return value
        case .secret(let name):
            guard let value = stored("secret:" + name) else { throw .secret(name) }
            return value
        case .credential(let name):
            guard let value = stored("credential:" + name) else { throw .credential(name) }
            return value
        case .prompt(let name):
            guard let value = answers[name] else { throw .prompt(name) }
            return value
        }
    }

    /// A secret of the identity, where `IdentityConfig.secretEntries` names it.
    private func stored(_ field: String) -> String? {
        secrets[IdentityConfig.secretName(identity: identity, field)]
    }

    /// `template` with every placeholder replaced by its value, passed through `encoding`
    /// (a URL's percent-encoding); literal text goes as it is written.
    func render(_ template: RecipeTemplate, encoding: (String) -> String = { $0 }) throws(Missing) -> String {
        var text = ""
        for part in template.parts {
            if case .literal(let literal) = part {
                text += literal
            } else {
                text += encoding(try value(of: part))
            }
        }
        return text
    }

    /// Every value a message must not show: the identity's secrets and credentials, its
    /// secret captures and what a person typed.
    func redaction(_ recipe: Recipe) -> SecretRedaction {
        var values = recipe.secrets.compactMap { stored("secret:" + $0.name) }
        values += recipe.credentials.compactMap { stored("credential:" + $0.name) }
        values += captures.compactMap { secretCaptures.contains($0.key) ? $0.value : nil }
        values += answers.values
        return SecretRedaction(values: values)
    }
}
