/// The type a scalar reads as under YAML 1.1's types (yaml.org/type): a plain `3` is an
/// int, `1.5` a float, `yes` a bool, `~` null; a quoted scalar is a string, and an
/// explicit tag (`!!str 3`) decides. The other types of 1.1 (timestamps, `<<`, `=`) read
/// as strings: nothing in the configuration types them.
enum YAMLScalarType {
    case null, bool, int, float, string
}

extension YAMLScalar {
    private static let tagPrefix = "tag:yaml.org,2002:"

    var type: YAMLScalarType {
        if let tag {
            return switch tag {
            case Self.tagPrefix + "null": .null
            case Self.tagPrefix + "bool": .bool
            case Self.tagPrefix + "int": .int
            case Self.tagPrefix + "float": .float
            default: .string
            }
        }
        if quoted { return .string }
        // The types' regular expressions, tried in the order YAML's resolvers try them.
        if text.wholeMatch(of: #/yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF/#) != nil {
            return .bool
        }
        if text.wholeMatch(of: #/[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+/#) != nil {
            return .int
        }
        if text.wholeMatch(of: #/[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)/#) != nil {
            return .float
        }
        return isNullText ? .null : .string
    }

    /// YAML's null: a plain empty scalar, `~` or `null`, or one tagged `!!null`.
    var isNull: Bool {
        (isPlain && isNullText) || tag == Self.tagPrefix + "null"
    }

    private var isNullText: Bool {
        switch text {
        case "", "~", "null", "Null", "NULL": true
        default: false
        }
    }

    /// `true`/`false` and YAML 1.1's `yes`/`no`/`on`/`off` in any case, unquoted.
    var bool: Bool? {
        guard readsAs(.bool) else { return nil }
        return switch text.lowercased() {
        case "true", "yes", "on": true
        case "false", "no", "off": false
        default: nil
        }
    }

    /// A YAML 1.1 integer, unquoted: decimal, `0x1F`, `0b101`, `017` or `0o17` (octal),
    /// `1:30` (base 60), with `_` between digits (`1_000`).
    var int: Int? {
        guard readsAs(.int) else { return nil }
        let (negative, digits) = Self.sign(text.filter { $0 != "_" })
        let sign = negative ? "-" : ""
        guard Self.unsigned(digits) else { return nil }
        if digits.contains(":") {
            // The sign on every part: the sum keeps it, and `Int.min` fits.
            return Self.base60(digits, { Int(sign + $0) }) { value, part in
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 60)
                let (sum, carry) = shifted.addingReportingOverflow(part)
                return overflow || carry ? nil : sum
            }
        }
        guard digits != "0", let base = Self.radixes.first(where: { digits.hasPrefix($0.prefix) }) else {
            return Int(sign + digits)
        }
        let rest = digits.dropFirst(base.prefix.count)
        return Self.unsigned(rest) ? Int(sign + rest, radix: base.radix) : nil
    }

    /// A YAML 1.1 float, unquoted: `1.5`, `1e3`, `.inf`, `-.inf`, `.nan`, `1:30.5` (base 60).
    var double: Double? {
        guard readsAs(.float) else { return nil }
        switch text.lowercased() {
        case ".inf", "+.inf": return .infinity
        case "-.inf": return -.infinity
        case ".nan": return .nan
        default: break
        }
        let (negative, digits) = Self.sign(text.filter { $0 != "_" })
        guard Self.unsigned(digits) else { return nil }
        let magnitude = digits.contains(":") ? Self.base60(digits, { Double($0) }, { $0 * 60 + $1 }) : Double(digits)
        return magnitude.map { negative ? -$0 : $0 }
    }

    /// Tagged with the type asked for (`!!int "3"`), or untagged and unquoted.
    private func readsAs(_ type: YAMLScalarType) -> Bool {
        tag == nil ? !quoted : self.type == type
    }

    /// Swift's parsing of numbers takes a sign where YAML has none: after the first
    /// (`-+5`), after a prefix (`0x-5`), in a part of 60 (`1:-5`).
    private static func unsigned(_ text: Substring) -> Bool {
        text.first != "-" && text.first != "+"
    }

    private static func sign(_ text: String) -> (negative: Bool, digits: Substring) {
        switch text.first {
        case "-": (true, text.dropFirst())
        case "+": (false, text.dropFirst())
        default: (false, text[...])
        }
    }

    /// `1:30:05`, each part after the first a number of the next smaller unit of 60.
    private static func base60<T>(
        _ digits: Substring, _ parse: (Substring) -> T?, _ shiftAndAdd: (T, T) -> T?
    ) -> T? {
        var parts = digits.split(separator: ":", omittingEmptySubsequences: false).makeIterator()
        guard let first = parts.next(), var value = parse(first) else { return nil }
        while let part = parts.next() {
            guard unsigned(part), let next = parse(part), let shifted = shiftAndAdd(value, next) else { return nil }
            value = shifted
        }
        return value
    }

    private static let radixes: [(prefix: String, radix: Int)] = [("0x", 16), ("0b", 2), ("0o", 8), ("0", 8)]
}
