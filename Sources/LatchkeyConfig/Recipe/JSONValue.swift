/// A JSON value, read from an answer (Foundation's decoder) or written in the
/// configuration (an expected field value).
public indirect enum JSONValue: Sendable, Equatable, Decodable {
    case string(String)
    case number(Double)
    /// A whole number an answer writes, kept exact: an id past 2^53 would lose digits as
    /// a Double. Equal to a `number` of the same value.
    case integer(Int64)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.integer(let a), .number(let b)), (.number(let b), .integer(let a)): Double(a) == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null): true
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    /// The value at `path`, nil when a key or index along it is missing.
    public subscript(path: JSONPath) -> JSONValue? {
        var value = self
        for component in path.components {
            switch (component, value) {
            case (.key(let key), .object(let members)):
                guard let member = members[key] else { return nil }
                value = member
            case (.index(let index), .array(let elements)):
                guard elements.indices.contains(index) else { return nil }
                value = elements[index]
            default:
                return nil
            }
        }
        return value
    }

    /// A scalar as the text a template or header carries: strings as they are, numbers
    /// without a needless `.0`, booleans as `true`/`false`; nil for null, arrays, objects.
    public var scalarText: String? {
        switch self {
        case .string(let text): text
        case .integer(let integer): String(integer)
        case .number(let number):
            // Below 2^53 a whole Double is exact, and written without a needless `.0`.
            number.rounded() == number && abs(number) < 9_007_199_254_740_992 ? String(Int64(number)) : String(number)
        case .bool(let flag): flag ? "true" : "false"
        case .null, .array, .object: nil
        }
    }
}

/// A path into a JSON document: `session_id`, `data.token`, `items[0].id`, optionally
/// starting with `$.`.
public struct JSONPath: Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Component: Sendable, Equatable, Hashable {
        case key(String)
        case index(Int)
    }

    public let components: [Component]

    public init(components: [Component]) {
        self.components = components
    }

    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public init(parsing text: String) throws(ParseError) {
        var rest = text.hasPrefix("$.") ? text.dropFirst(2) : text[...]
        var components: [Component] = []
        while !rest.isEmpty {
            if rest.first == "[" {
                guard let close = rest.firstIndex(of: "]"), let index = Int(rest[rest.index(after: rest.startIndex)..<close]), index >= 0 else {
                    throw ParseError(description: "an index must be written [N] with N a whole number")
                }
                components.append(.index(index))
                rest = rest[rest.index(after: close)...]
                if rest.first == "." { rest = rest.dropFirst() }
                continue
            }
            let end = rest.firstIndex(where: { $0 == "." || $0 == "[" }) ?? rest.endIndex
            let key = rest[..<end]
            guard !key.isEmpty else { throw ParseError(description: "an empty name between dots") }
            components.append(.key(String(key)))
            rest = rest[end...]
            if rest.first == "." {
                rest = rest.dropFirst()
                guard !rest.isEmpty else { throw ParseError(description: "ends with a dot") }
            }
        }
        guard !components.isEmpty else { throw ParseError(description: "empty") }
        self.components = components
    }

    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }
}

/// A JSON field that must hold a value: a step's expectation, or a `renew_on` body match.
public struct JSONFieldMatch: Sendable, Equatable {
    public var path: JSONPath
    public var value: JSONValue

    public init(path: JSONPath, value: JSONValue) {
        self.path = path
        self.value = value
    }

    /// Whether `document` holds the value at the path (numbers compare as numbers).
    public func holds(in document: JSONValue) -> Bool {
        document[path] == value
    }
}
