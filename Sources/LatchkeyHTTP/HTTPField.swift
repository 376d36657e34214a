/// One field line of a header or trailer section, as received or as to be sent.
///
/// `name` keeps the spelling it arrived with (RFC 9110 §5.1: names are case-insensitive,
/// so comparisons go through `HTTPFields`, which matches names ASCII case-insensitively).
/// `value` has its leading and trailing whitespace removed (RFC 9110 §5.5).
public struct HTTPField: Sendable, Equatable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension HTTPField: CustomStringConvertible {
    /// Only the name: values may hold credentials and must not reach logs by accident.
    public var description: String { "\(name): …" }
}
