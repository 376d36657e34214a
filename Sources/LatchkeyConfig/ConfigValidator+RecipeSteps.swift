extension ConfigValidator {
    /// A template of a recipe and its place, checked once every step's captures are known
    /// (a step may only name those of the steps before it).
    struct RecipeTemplateUse {
        var template: RecipeTemplate
        var path: ConfigPath
        /// The step it belongs to; nil for the logout step, which may name any capture.
        var step: Int?
    }

    /// One step of a recipe (`step` is its index), or its logout step (`step` nil: its
    /// name is optional, it captures nothing), and the names of all its captures, valid or
    /// not. A step whose request is broken comes back with an empty one, its problem
    /// recorded, so that its captures still count for the steps after it; the loader never
    /// returns a config with a recorded problem.
    mutating func validateRecipeStep(
        _ raw: ConfigMapping, step: Int?, hasBaseURL: Bool, templates: inout [RecipeTemplateUse]
    ) -> (step: RecipeStep, captureNames: [String]) {
        let path = raw.path
        var name = step == nil ? "logout" : ""
        if let given = raw.string("name") {
            name = given
            if !ConfigSyntax.isName(given) { diagnostics.error(path / "name", "invalid step name", expected: ConfigSyntax.nameExpectation) }
        } else if step != nil {
            diagnostics.error(path, "missing key 'name'", expected: "the step's name, which its errors and logs show")
        }
        var request = RecipeRequest(method: "GET", url: RecipeTemplate(parts: []))
        if let rawRequest = raw.mapping("request", ConfigKeys.recipeRequest, expected: "a mapping with method and url") {
            request = validateRecipeRequest(rawRequest, step: step, hasBaseURL: hasBaseURL, templates: &templates)
        } else if raw.node("request") == nil {
            diagnostics.error(path, "missing key 'request'", expected: "the step's request: method, url, and query, headers, json or form")
        }
        var expect = RecipeExpectation()
        if let rawExpect = raw.mapping("expect", ConfigKeys.recipeExpect, expected: "a mapping with status and json") {
            expect = validateRecipeExpectation(rawExpect)
        }
        let captures = raw.entries("capture") ?? []
        return (RecipeStep(name: name, request: request, expect: expect, captures: validateRecipeCaptures(captures)), captures.map(\.name))
    }

    private mutating func validateRecipeRequest(
        _ raw: ConfigMapping, step: Int?, hasBaseURL: Bool, templates: inout [RecipeTemplateUse]
    ) -> RecipeRequest {
        let path = raw.path
        var method = "GET"
        if let given = raw.string("method") {
            // Methods are case-sensitive (RFC 9110 §9.1), but every registered one is upper case.
            if ConfigSyntax.isToken(given) { method = given.uppercased() } else {
                diagnostics.error(path / "method", "invalid method", expected: "an HTTP method such as GET, POST or DELETE")
            }
        }
        var url = RecipeTemplate(parts: [])
        if let node = raw.node("url") {
            if let parsed = recipeTemplate(node, step: step, templates: &templates) {
                url = parsed
                if let failure = ConfigSyntax.recipeStepURL(parsed, hasBaseURL: hasBaseURL) {
                    diagnostics.error(node.path, failure.message, expected: failure.expected)
                }
            }
        } else {
            diagnostics.error(path, "missing key 'url'", expected: "an http or https URL, or a path relative to base_url")
        }
        var request = RecipeRequest(method: method, url: url)
        request.query = recipeFields(raw.entries("query"), step: step, templates: &templates) { name, _ in
            ConfigSyntax.isQueryName(name) ? nil : ConfigSyntax.Failure("invalid query parameter name", expected: "a name such as api_key")
        }
        request.headers = recipeFields(raw.entries("headers"), step: step, templates: &templates) { name, value in
            if let failure = ConfigSyntax.injectableHeader(name) { return failure }
            return value?.hasLiteral(where: ConfigSyntax.isControl) == true
                ? ConfigSyntax.Failure("contains control characters", expected: "printable text around the placeholders") : nil
        }
        switch (raw.node("json"), raw.node("form")) {
        case (nil, nil): break
        case (let json?, nil):
            if case .scalar = json.content {
                json.problems.wrongType(json.path, expected: "a mapping or a list, the JSON body")
            } else if let body = recipeJSONBody(json, step: step, templates: &templates) {
                request.body = .json(body)
            }
        case (nil, let form?):
            request.body = .form(recipeFields(form.entries(), step: step, templates: &templates) { name, _ in
                ConfigSyntax.isQueryName(name) ? nil : ConfigSyntax.Failure("invalid form field name", expected: "a name such as username")
            })
        case (.some, .some):
            diagnostics.error(path, "both json and form", expected: "one body: json or form")
        }
        return request
    }

    /// Names and their value templates (query parameters, headers, form fields), in
    /// configuration order; `check` says what is wrong with a name or a value (nil when
    /// the value is not a valid template, whose problem is recorded already).
    private mutating func recipeFields(
        _ entries: [(name: String, node: ConfigNode)]?, step: Int?, templates: inout [RecipeTemplateUse],
        check: (String, RecipeTemplate?) -> ConfigSyntax.Failure?
    ) -> [RecipeField] {
        var fields: [RecipeField] = []
        for (name, node) in entries ?? [] {
            let value = recipeTemplate(node, step: step, templates: &templates)
            if let failure = check(name, value) {
                diagnostics.error(node.path, failure.message, expected: failure.expected)
            } else if let value {
                fields.append(RecipeField(name: name, value: value))
            }
        }
        return fields
    }

    /// A JSON body as written: strings are templates, other scalars literal values,
    /// mappings and lists nest, members keep their order.
    private mutating func recipeJSONBody(_ node: ConfigNode, step: Int?, templates: inout [RecipeTemplateUse]) -> RecipeJSONBody? {
        switch node.content {
        case .mapping:
            if Self.isUnquotedPlaceholder(node) { return recipeTemplate(node, step: step, templates: &templates).map(RecipeJSONBody.string) }
            let members = node.entries() ?? []
            let values = members.compactMap { name, value in recipeJSONBody(value, step: step, templates: &templates).map { (name: name, value: $0) } }
            return .object(values)
        case .sequence:
            return .array((node.list() ?? []).compactMap { recipeJSONBody($0, step: step, templates: &templates) })
        case .scalar(let scalar) where scalar.type == .string:
            return recipeTemplate(node, step: step, templates: &templates).map(RecipeJSONBody.string)
        default:
            return node.jsonScalar().map(RecipeJSONBody.literal)
        }
    }

    /// A template written as a string, kept for the check of the names it holds.
    private mutating func recipeTemplate(_ node: ConfigNode, step: Int?, templates: inout [RecipeTemplateUse]) -> RecipeTemplate? {
        if Self.isUnquotedPlaceholder(node) {
            diagnostics.error(node.path, "an unquoted {…} is a YAML mapping, not a template", expected: "the template in quotes, e.g. \"{secrets.password}\"")
            return nil
        }
        guard let text = node.string(expected: "a string, which may hold placeholders") else { return nil }
        do throws(CredentialTemplate.ParseError) {
            let template = try RecipeTemplate(parsing: text)
            templates.append(RecipeTemplateUse(template: template, path: node.path, step: step))
            return template
        } catch {
            diagnostics.error(node.path, "invalid template: \(error.message)", expected: RecipeTemplate.expectation)
            return nil
        }
    }

    /// `{secrets.password}` unquoted: YAML reads a flow mapping whose one key has no value.
    private static func isUnquotedPlaceholder(_ node: ConfigNode) -> Bool {
        guard case .mapping(let mapping) = node.content, mapping.count == 1,
              case .scalar(let name) = mapping[0].key.content, case .scalar(let empty) = mapping[0].value.content,
              empty.text.isEmpty, empty.isPlain else { return false }
        return (try? RecipeTemplate(parsing: "{\(name.text)}")) != nil
    }

    private mutating func validateRecipeExpectation(_ raw: ConfigMapping) -> RecipeExpectation {
        var expectation = RecipeExpectation()
        if let node = raw.node("status") {
            // One status, or a list of them.
            var elements = [node]
            if case .sequence(let list) = node.content {
                elements = node.list() ?? []
                if list.isEmpty { diagnostics.error(node.path, "empty list", expected: "statuses such as [200]; omit the key for any 2xx") }
            }
            for element in elements {
                guard let status = element.int() else { continue }
                if (100...599).contains(status) {
                    expectation.statuses.insert(status)
                } else {
                    diagnostics.error(element.path, "not an HTTP status", expected: "a status from 100 to 599")
                }
            }
        }
        expectation.fields = raw.node("json")?.jsonFieldMatches() ?? []
        return expectation
    }

    /// `capture:`: names to values of the answer, each from exactly one of a JSON path, a
    /// header or a cookie; secret unless `secret: false`.
    private mutating func validateRecipeCaptures(_ entries: [(name: String, node: ConfigNode)]) -> [RecipeCapture] {
        entries.compactMap { name, node -> RecipeCapture? in
            let path = node.path
            if !ConfigSyntax.isRecipeName(name) {
                diagnostics.error(path, "invalid capture name", expected: ConfigSyntax.recipeNameExpectation)
            } else if let reserved = RecipeTemplate.reservedNames.first(where: { $0 == name }) {
                diagnostics.error(path, "'\(reserved)' is reserved", expected: "another name: \(RecipeTemplate.reservedNames.joined(separator: ", ")) are not captures")
            }
            guard let raw = node.mapping(ConfigKeys.recipeCapture, expected: "a mapping with one of json, header, cookie") else { return nil }
            let json = raw.string("json"), header = raw.string("header"), cookie = raw.string("cookie")
            let given = [json.map { _ in "json" }, header.map { _ in "header" }, cookie.map { _ in "cookie" }].compactMap { $0 }
            guard given.count == 1 else {
                diagnostics.error(path, given.isEmpty ? "no source" : "more than one source (\(given.joined(separator: ", ")))",
                                  expected: "exactly one of json (a JSON path), header, cookie")
                return nil
            }
            let source: RecipeCapture.Source
            if let json {
                do throws(JSONPath.ParseError) {
                    source = .json(try JSONPath(parsing: json))
                } catch {
                    diagnostics.error(path / "json", "invalid JSON path: \(error.description)", expected: JSONPath.expectation)
                    return nil
                }
            } else if let header {
                guard ConfigSyntax.isToken(header) else {
                    diagnostics.error(path / "header", "invalid header name", expected: "an HTTP field name (RFC 9110 token)")
                    return nil
                }
                source = .header(header)
            } else {
                guard let cookie, ConfigSyntax.isToken(cookie) else {
                    diagnostics.error(path / "cookie", "invalid cookie name", expected: "a cookie name (RFC 6265 token)")
                    return nil
                }
                source = .cookie(cookie)
            }
            return RecipeCapture(name: name, source: source, secret: raw.bool("secret") ?? true)
        }
    }
}

extension RecipeTemplate {
    static let expectation = "text with placeholders {CAPTURE}, {credentials.NAME}, {secrets.NAME} or {prompts.NAME}; {{ and }} for braces"

    /// Names a capture cannot have: the identity's token in a route's template, and the
    /// kinds of the other placeholders.
    static let reservedNames = CredentialTemplate.tokenPlaceholders + ["credentials", "secrets", "prompts"]

    /// Whether a literal part holds a byte `forbidden` says no to (CR or LF in a header).
    func hasLiteral(where forbidden: (UInt8) -> Bool) -> Bool {
        parts.contains { part in
            if case .literal(let text) = part { return text.utf8.contains(where: forbidden) }
            return false
        }
    }
}
