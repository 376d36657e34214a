import Yams

extension ConfigNode {
    static let jsonScalarExpectation = "a string, number, true, false or null"

    /// The node's type as YAML's core schema has it: `3` an int, `"3"` or `!!str 3` a string.
    /// The document is parsed with no tag rules (`ConfigLoader`), so a plain scalar's tag is
    /// still the implicit one here (nothing hashes a value, which would resolve it): the
    /// default rules' regular expressions type the few scalars that JSON bodies need typed.
    var yamlType: Tag.Name {
        Resolver.default.resolveTag(of: node)
    }

    /// A YAML scalar as the JSON value it reads as: plain `true`, `3`, `1.5`, `null` are
    /// typed as YAML's core schema types them; quoted scalars are strings.
    func jsonScalar() -> JSONValue? {
        guard case .scalar(let scalar) = node else {
            problems.wrongType(path, expected: Self.jsonScalarExpectation)
            return nil
        }
        switch yamlType {
        case .null: return .null
        case .bool: return Bool.construct(from: scalar).map(JSONValue.bool)
        case .int: return Int.construct(from: scalar).map { .number(Double($0)) }
        case .float:
            // JSON has no infinity or NaN (RFC 8259 §6).
            guard let number = Double.construct(from: scalar), number.isFinite else {
                problems.invalid(path, "not a finite number", expected: Self.jsonScalarExpectation)
                return nil
            }
            return .number(number)
        default: return .string(scalar.string)
        }
    }

    /// A mapping of JSON paths to the values they must hold: a recipe step's `expect.json`,
    /// a `renew_on` entry's `json`. Empty when the mapping is.
    func jsonFieldMatches() -> [JSONFieldMatch]? {
        guard let entries = entries() else { return nil }
        return entries.compactMap { key, value in
            let path: JSONPath
            do throws(JSONPath.ParseError) {
                path = try JSONPath(parsing: key)
            } catch {
                problems.invalid(value.path, "invalid JSON path: \(error.description)", expected: JSONPath.expectation)
                return nil
            }
            return value.jsonScalar().map { JSONFieldMatch(path: path, value: $0) }
        }
    }
}

extension JSONPath {
    static let expectation = "a JSON path such as session_id, data.token or items[0].id, optionally starting with $."
}
