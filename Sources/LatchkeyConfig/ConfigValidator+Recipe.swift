import LatchkeyUpstream

extension ConfigValidator {
    /// `grant: recipe`: the steps that make the identity's credential (TheMovieDB's
    /// session), their secrets and prompts, its logout step and expiry. Nil when it has no
    /// steps to check; otherwise the recipe as far as it is valid, so that routes can check
    /// the captures they name. `base_url`'s long form gives the TLS, proxy and timeout
    /// settings of every step's request, as `token_url`'s does for the other grants.
    mutating func validateRecipe(_ raw: ConfigMapping, credentials: Credentials) -> (recipe: Recipe, idpOptions: UpstreamOptions)? {
        let path = raw.path
        var recipe = Recipe(steps: [])
        var idpOptions = UpstreamOptions()
        let baseURL = raw.node("base_url")
        if let baseURL, let upstream = validateUpstream(baseURL) {
            recipe.baseURL = upstream.url
            idpOptions = upstream.options
        }
        let rawSecrets = raw.entries("secrets") ?? [], rawPrompts = raw.entries("prompts") ?? []
        let secretNames = recipeNames(rawSecrets, kind: "secret"), promptNames = recipeNames(rawPrompts, kind: "prompt")
        for (name, node) in rawSecrets {
            if let source = Self.secretMapping(node).flatMap({ secretSource($0) }) { recipe.secrets.append(RecipeSecret(name: name, source: source)) }
        }
        for (name, node) in rawPrompts {
            guard let text = node.string(expected: "the text that asks for the value") else { continue }
            if text.trimmingASCIIWhitespace().isEmpty || text.utf8.contains(where: ConfigSyntax.isControl) {
                diagnostics.error(node.path, "empty or not one line", expected: "a line that asks for the value, e.g. \"One-time code\"")
            }
            recipe.prompts.append(RecipePrompt(name: name, text: text))
        }

        guard let rawSteps = raw.list("steps") else {
            if raw.node("steps") == nil { diagnostics.error(path, "missing key 'steps'", expected: "a list of steps, each with a name and a request") }
            return nil
        }
        if rawSteps.isEmpty { diagnostics.error(path / "steps", "empty list", expected: "at least one step") }
        var templates: [RecipeTemplateUse] = []
        var stepIndexByName: [String: Int] = [:]
        // Every capture's name, valid or not, in the order the steps make them, and the step that makes each.
        var captureNames: [String] = []
        var captureMakers: [String: Int] = [:]
        for (index, node) in rawSteps.enumerated() {
            guard let rawStep = node.mapping(ConfigKeys.recipeStep, expected: "a mapping with name, request, expect and capture") else { continue }
            let (step, stepCaptures) = validateRecipeStep(rawStep, step: index, hasBaseURL: baseURL != nil, templates: &templates)
            if let first = stepIndexByName[step.name] {
                diagnostics.error(node.path / "name", "duplicate step name\(ConfigSyntax.quoted(step.name)) (also steps[\(first)])",
                                  expected: "a unique name for each step")
            } else if !step.name.isEmpty {
                stepIndexByName[step.name] = index
            }
            for name in stepCaptures {
                if let first = captureMakers[name] {
                    diagnostics.error(node.path / "capture" / name, "also captured by steps[\(first)]", expected: "a unique name for each capture")
                } else {
                    captureMakers[name] = index
                    captureNames.append(name)
                }
            }
            recipe.steps.append(step)
        }
        if captureNames.isEmpty, !rawSteps.isEmpty {
            diagnostics.error(path / "steps", "no step captures a value",
                              expected: "a capture: in a step, e.g. session_id: { json: session_id }; the last capture is the identity's token")
        }
        if let rawLogout = raw.mapping("logout", ConfigKeys.recipeLogout, expected: "a mapping with request, and optionally name and expect") {
            recipe.logout = validateRecipeStep(rawLogout, step: nil, hasBaseURL: baseURL != nil, templates: &templates).step
        }
        recipe.expiry = validateRecipeExpiry(raw, captures: captureNames)

        var names = RecipeNames(credentials: credentials.names, secrets: secretNames, prompts: promptNames,
                                captures: captureNames, captureMakers: captureMakers)
        for use in templates { checkRecipeTemplate(use, names: &names) }
        recipe.credentials = names.usedCredentials.compactMap { name in
            credentials.sources[name].map { RecipeSecret(name: name, source: $0) }
        }
        for name in promptNames where !names.usedPrompts.contains(name) {
            diagnostics.error(path / "prompts" / name, "no step's template names this prompt",
                              expected: "a prompt that a step's template uses; any prompt makes the identity log in with `latchkey login` only")
        }
        return (recipe, idpOptions)
    }

    /// The names of a recipe's `secrets:` or `prompts:`, each checked.
    private mutating func recipeNames(_ entries: [(name: String, node: ConfigNode)], kind: String) -> [String] {
        entries.map { name, node in
            if !ConfigSyntax.isRecipeName(name) {
                diagnostics.error(node.path, "invalid \(kind) name", expected: ConfigSyntax.recipeNameExpectation)
            }
            return name
        }
    }

    /// `lifetime`, `expires_in` or `expires_at`: at most one.
    private mutating func validateRecipeExpiry(_ raw: ConfigMapping, captures: [String]) -> RecipeExpiry {
        let path = raw.path
        let given = ["lifetime", "expires_in", "expires_at"].filter { raw.node($0) != nil }
        guard given.count <= 1 else {
            diagnostics.error(path / given[1], "more than one of \(given.joined(separator: ", "))",
                              expected: "one of lifetime, expires_in, expires_at; none: used until a route's renew_on refuses it")
            return .never
        }
        if let lifetime = positiveDuration(raw, "lifetime") { return .lifetime(lifetime) }
        for key in ["expires_in", "expires_at"] {
            guard let name = raw.string(key) else { continue }
            guard known(name, in: Set(captures), kind: "capture", section: "a step's capture", at: path / key) else { return .never }
            // The last capture is the identity's token: a time there is surely a mistake.
            if name == captures.last {
                diagnostics.error(path / key, "names the recipe's last capture, which is its token",
                                  expected: "a capture made before the token (the session id), so that {token} is not the time")
            }
            return key == "expires_in" ? .capturedSeconds(name) : .capturedTime(name)
        }
        return .never
    }

    /// What the templates of a recipe may name, and which credentials and prompts they use.
    struct RecipeNames {
        var credentials: Set<String>
        var secrets: [String]
        var prompts: [String]
        /// Every capture, in the order the steps make them.
        var captures: [String]
        /// The index of the step that makes each capture.
        var captureMakers: [String: Int]
        /// The credentials the templates name, in the order first named.
        var usedCredentials: [String] = []
        var usedPrompts: Set<String> = []
    }

    /// Each placeholder of a template names something its place may use: a capture of an
    /// earlier step (any in the logout step), an entry of `credentials:`, the recipe's own
    /// secret, or (not in the logout step, which no one answers) a prompt.
    private mutating func checkRecipeTemplate(_ use: RecipeTemplateUse, names: inout RecipeNames) {
        for part in use.template.parts {
            switch part {
            case .literal: break
            case .capture(let name):
                checkRecipeCapture(name, use: use, names: names)
            case .credential(let name):
                if known(name, in: names.credentials, kind: "credential", section: "credentials", at: use.path), !names.usedCredentials.contains(name) {
                    names.usedCredentials.append(name)
                }
            case .secret(let name):
                _ = known(name, in: Set(names.secrets), kind: "secret", section: "secrets", at: use.path)
            case .prompt(let name):
                guard use.step != nil else {
                    diagnostics.error(use.path, "a prompt in the logout step", expected: "captures, credentials and secrets: `latchkey logout` asks for nothing")
                    continue
                }
                if known(name, in: Set(names.prompts), kind: "prompt", section: "prompts", at: use.path) { names.usedPrompts.insert(name) }
            }
        }
    }

    private mutating func checkRecipeCapture(_ name: String, use: RecipeTemplateUse, names: RecipeNames) {
        guard let step = use.step else {
            _ = known(name, in: Set(names.captures), kind: "capture", section: "a step's capture", at: use.path)
            return
        }
        if let maker = names.captureMakers[name] {
            guard maker >= step else { return }
            let by = maker == step ? "this step" : "steps[\(maker)]"
            diagnostics.error(use.path, "the capture\(ConfigSyntax.quoted(name)) is made by \(by), after this request",
                              expected: "a capture of an earlier step")
            return
        }
        let earlier = names.captures.filter { (names.captureMakers[$0] ?? .max) < step }
        var message = "unknown capture\(ConfigSyntax.quoted(name))"
        if let suggestion = ConfigSyntax.closestMatch(to: name, in: earlier) { message += "; did you mean '\(suggestion)'?" }
        diagnostics.error(use.path, message, expected: earlier.isEmpty
            ? "no capture before this step: captures come from the answers of earlier steps"
            : "a capture of an earlier step: " + earlier.joined(separator: ", "))
    }
}
