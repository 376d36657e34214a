/// A credential template such as "Bearer {token}", parsed once at load time into the
/// literal text around its one placeholder, so that rendering is two appends.
///
/// Syntax: literal text with exactly one placeholder, `{token}` or its synonym
/// `{access_token}`; `{{` and `}}` stand for literal braces. Any other `{name}` is an
/// error, unless the caller allows it: a recipe identity's captures (`{session_id}`).
public struct CredentialTemplate: Sendable, Equatable, CustomStringConvertible {
    public let prefix: String
    public let suffix: String
    /// The name in the placeholder: "token" for `{token}` and `{access_token}`, else the
    /// other name the parser was allowed to accept (a capture's).
    public let placeholder: String
    private let prefixBytes: [UInt8]
    private let suffixBytes: [UInt8]

    /// The placeholder names accepted for the credential's value.
    public static let tokenPlaceholders = ["token", "access_token"]

    /// The template "{token}": the credential's value alone.
    public static let token = CredentialTemplate()

    public init(prefix: String = "", suffix: String = "", placeholder: String = "token") {
        self.prefix = prefix
        self.suffix = suffix
        self.placeholder = placeholder
        self.prefixBytes = Array(prefix.utf8)
        self.suffixBytes = Array(suffix.utf8)
    }

    /// Parses template text whose placeholder is one of `placeholders` (the token's names
    /// by default). Errors never quote the text: a user who pastes a token where the
    /// template belongs must not see it echoed into logs.
    public init(parsing text: String, placeholders: [String] = tokenPlaceholders) throws(ParseError) {
        var literal = ""
        var prefix: String?
        var placeholder = "token"
        try TemplateText.scan(text, literal: { literal += $0 }) { found throws(ParseError) in
            let name = String(found)
            guard placeholders.contains(name) else {
                if let suggestion = ConfigSyntax.closestMatch(to: name, in: placeholders) {
                    throw ParseError("unknown placeholder; did you mean {\(suggestion)}?")
                }
                throw ParseError("unknown placeholder")
            }
            guard prefix == nil else { throw ParseError("more than one placeholder") }
            prefix = literal
            if !Self.tokenPlaceholders.contains(name) { placeholder = name }
            literal = ""
        }
        guard let prefix else { throw ParseError("no {token} placeholder") }
        self.init(prefix: prefix, suffix: literal, placeholder: placeholder)
    }

    /// The credential value inside its template.
    @inlinable
    public func render(token: String) -> String {
        if prefix.isEmpty && suffix.isEmpty { return token }
        var result = String()
        result.reserveCapacity(prefix.utf8.count + token.utf8.count + suffix.utf8.count)
        result += prefix
        result += token
        result += suffix
        return result
    }

    /// Appends the rendered bytes, for callers that build header blocks as bytes.
    public func render(token: some Collection<UInt8>, into buffer: inout [UInt8]) {
        buffer.append(contentsOf: prefixBytes)
        buffer.append(contentsOf: token)
        buffer.append(contentsOf: suffixBytes)
    }

    /// The template text in its canonical form, e.g. "Bearer {token}".
    public var description: String {
        Self.escape(prefix) + "{\(placeholder)}" + Self.escape(suffix)
    }

    /// The literal parts contain a byte from `forbidden`, e.g. CR/LF for a header value.
    func literalContains(where forbidden: (UInt8) -> Bool) -> Bool {
        prefixBytes.contains(where: forbidden) || suffixBytes.contains(where: forbidden)
    }

    private static func escape(_ literal: String) -> String {
        literal.replacingBraces()
    }

    public static func == (lhs: CredentialTemplate, rhs: CredentialTemplate) -> Bool {
        lhs.prefix == rhs.prefix && lhs.suffix == rhs.suffix && lhs.placeholder == rhs.placeholder
    }

    /// Why template text was refused; the message never quotes the text.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String

        init(_ message: String) {
            self.message = message
        }

        public var description: String { message }
    }
}

extension String {
    /// The text with `{` and `}` doubled, as templates write literal braces.
    func replacingBraces() -> String {
        var result = ""
        for character in self {
            switch character {
            case "{": result += "{{"
            case "}": result += "}}"
            default: result.append(character)
            }
        }
        return result
    }
}
