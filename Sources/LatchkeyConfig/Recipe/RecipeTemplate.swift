/// Text with placeholders, parsed once at load time: `{request_token}` (a capture made by
/// an earlier step, or held by the identity), `{credentials.NAME}` (an entry of
/// `credentials:`), `{secrets.NAME}` (the recipe's own secret), `{prompts.NAME}` (typed by
/// a person during `latchkey login`). `{{` and `}}` are literal braces.
public struct RecipeTemplate: Sendable, Equatable, CustomStringConvertible {
    public enum Part: Sendable, Equatable {
        case literal(String)
        case capture(String)
        case credential(String)
        case secret(String)
        case prompt(String)
    }

    public let parts: [Part]

    public init(parts: [Part]) {
        self.parts = parts
    }

    /// Parses template text. Errors never quote the text, which may hold a pasted secret.
    public init(parsing text: String) throws(CredentialTemplate.ParseError) {
        var parts: [Part] = []
        try TemplateText.scan(text, literal: { if !$0.isEmpty { parts.append(.literal($0)) } }) { name throws(CredentialTemplate.ParseError) in
            parts.append(try Self.placeholder(name))
        }
        self.parts = parts
    }

    private static func placeholder(_ name: Substring) throws(CredentialTemplate.ParseError) -> Part {
        let pieces = name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard pieces.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isNameCharacter) }) else {
            throw .init("invalid placeholder name")
        }
        guard pieces.count == 2 else { return .capture(String(name)) }
        let key = String(pieces[1])
        switch pieces[0] {
        case "credentials": return .credential(key)
        case "secrets": return .secret(key)
        case "prompts": return .prompt(key)
        default: throw .init("unknown placeholder kind; use {CAPTURE}, {credentials.NAME}, {secrets.NAME} or {prompts.NAME}")
        }
    }

    private static func isNameCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == "-")
    }

    /// The template text in its canonical form.
    public var description: String {
        parts.map { part in
            switch part {
            case .literal(let text): text.replacingBraces()
            case .capture(let name): "{\(name)}"
            case .credential(let name): "{credentials.\(name)}"
            case .secret(let name): "{secrets.\(name)}"
            case .prompt(let name): "{prompts.\(name)}"
            }
        }.joined()
    }
}
