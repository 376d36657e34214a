/// A host a route serves or a listener accepts: one name (`api.example.com`), or every
/// name under a domain (`*.example.com`: any depth, not the domain itself, as nginx's
/// leading-wildcard `server_name`). Built from validated, lower-cased configuration text.
public enum HostPattern: Sendable, Equatable {
    case exact(String)
    /// The suffix with its leading dot: ".example.com".
    case subdomains(of: String)

    /// `text` as `ConfigSyntax.hostOrWildcard` returns it (lower-cased, no port).
    public init(_ text: String) {
        self = text.hasPrefix("*.") ? .subdomains(of: String(text.dropFirst())) : .exact(text)
    }

    /// `host`: lower-cased, without port.
    public func matches(_ host: some StringProtocol) -> Bool {
        switch self {
        case .exact(let name): host == name
        case .subdomains(let suffix): host.utf8.count > suffix.utf8.count && host.hasSuffix(suffix)
        }
    }
}
