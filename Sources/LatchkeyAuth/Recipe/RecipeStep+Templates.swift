import LatchkeyConfig

extension RecipeStep {
    /// The placeholders its request renders, each once, in the order they appear: which
    /// prompts to ask before it goes, and which secrets to name when it is refused.
    var placeholders: [RecipeTemplate.Part] {
        var templates = [request.url] + request.query.map(\.value) + request.headers.map(\.value)
        switch request.body {
        case .none: break
        case .form(let fields): templates += fields.map(\.value)
        case .json(let body): templates += body.templates
        }
        var seen: [RecipeTemplate.Part] = []
        for part in templates.flatMap(\.parts) {
            if case .literal = part { continue }
            if !seen.contains(part) { seen.append(part) }
        }
        return seen
    }

    /// Whether its answer is read as JSON: a field must hold a value, or a capture is taken
    /// from the body.
    var readsJSON: Bool {
        !expect.fields.isEmpty || captures.contains { if case .json = $0.source { true } else { false } }
    }
}

extension RecipeJSONBody {
    /// Its strings, which are templates.
    var templates: [RecipeTemplate] {
        switch self {
        case .string(let template): [template]
        case .literal: []
        case .array(let elements): elements.flatMap(\.templates)
        case .object(let members): members.flatMap(\.value.templates)
        }
    }
}
