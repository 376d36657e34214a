/// A credential template such as "Bearer {token}", parsed once at load time.
/// Placeholder: stub for the config engineer to complete.
public struct CredentialTemplate: Sendable, Equatable {
    public let prefix: String
    public let suffix: String

    /// Splits around the single "{token}" placeholder.
    public init(prefix: String = "", suffix: String = "") {
        self.prefix = prefix
        self.suffix = suffix
    }

    public func render(token: String) -> String { prefix + token + suffix }
}
