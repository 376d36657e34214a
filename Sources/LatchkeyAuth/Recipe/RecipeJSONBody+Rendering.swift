import LatchkeyConfig
import LatchkeyHTTP

extension RecipeJSONBody {
    /// The body as JSON text (RFC 8259), its strings rendered from `values` and escaped as
    /// JSON strings, its members in the configuration's order.
    func rendered(_ values: RecipeValues) throws(RecipeValues.Missing) -> [UInt8] {
        var out: [UInt8] = []
        try append(to: &out, values)
        return out
    }

    private func append(to out: inout [UInt8], _ values: RecipeValues) throws(RecipeValues.Missing) {
        switch self {
        case .string(let template):
            JSONText.appendQuoted(try values.render(template), to: &out)
        case .literal(.string(let text)):
            JSONText.appendQuoted(text, to: &out)
        case .literal(let scalar):
            // RFC 8259 §6 has no NaN or infinity: those are written null, like null itself
            // (and an array or object, which the configuration never makes a literal).
            let finite = if case .number(let number) = scalar { number.isFinite } else { true }
            out += Array((finite ? scalar.scalarText ?? "null" : "null").utf8)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                try element.append(to: &out, values)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONText.appendQuoted(member.name, to: &out)
                out.append(UInt8(ascii: ":"))
                try member.value.append(to: &out, values)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
