/// The brace syntax both kinds of template share: `{name}` is a placeholder, `{{` and `}}`
/// are literal braces. Hands the text over in order, each run of literal text (braces
/// unescaped) before the placeholder that ends it, then the rest; what a placeholder may
/// name is the caller's to check. Errors never quote the text, which may hold a secret.
enum TemplateText {
    static func scan(
        _ text: String,
        literal: (String) -> Void,
        placeholder: (Substring) throws(CredentialTemplate.ParseError) -> Void
    ) throws(CredentialTemplate.ParseError) {
        // Over the UTF-8 bytes: a brace is always one byte, while a Character search would
        // take a brace with a combining mark after it for another character.
        var run: [UInt8] = []
        var bytes = text.utf8[...]
        while let byte = bytes.first {
            bytes = bytes.dropFirst()
            switch byte {
            case UInt8(ascii: "{"):
                if bytes.first == UInt8(ascii: "{") {
                    bytes = bytes.dropFirst()
                    run.append(byte)
                    continue
                }
                guard let close = bytes.firstIndex(of: UInt8(ascii: "}")) else { throw .init("unclosed '{'") }
                literal(String(decoding: run, as: UTF8.self))
                run = []
                try placeholder(Substring(bytes[..<close]))
                bytes = bytes[bytes.index(after: close)...]
            case UInt8(ascii: "}"):
                guard bytes.first == UInt8(ascii: "}") else { throw .init("unmatched '}'") }
                bytes = bytes.dropFirst()
                run.append(byte)
            default:
                run.append(byte)
            }
        }
        literal(String(decoding: run, as: UTF8.self))
    }
}