extension ConfigNode {
    static let jsonScalarExpectation = "a string, number, true, false or null"

    /// A YAML scalar as the JSON value it reads as: plain `true`, `3`, `1.5`, `null` are
    /// typed by YAML's types (`YAMLScalarType`); quoted scalars are strings.
    func jsonScalar() -> JSONValue? {
        guard case .scalar(let scalar) = content else {
            problems.wrongType(path, expected: Self.jsonScalarExpectation)
            return nil
        }
        switch scalar.type {
        case .null: return .null
        case .bool: return scalar.bool.map(JSONValue.bool)
        case .int: return scalar.int.map { .number(Double($0)) }
        case .float:
            // JSON has no infinity or NaN (RFC 8259 §6).
            guard let number = scalar.double, number.isFinite else {
                problems.invalid(path, "not a finite number", expected: Self.jsonScalarExpectation)
                return nil
            }
            return .number(number)
        case .string: return .string(scalar.text)
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
