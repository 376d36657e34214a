/// The token endpoint refused the identity's configuration, not a grant or a moment (RFC
/// 6749 §5.2: `invalid_client`, `unauthorized_client`, `unsupported_grant_type`,
/// `invalid_scope`): the same request would fail the same way, so none is made until the
/// identity's secrets or configuration change.
public struct Misconfiguration: Sendable, Equatable, CustomStringConvertible {
    /// The IdP's answer, naming its OAuth error; never a secret.
    public var reason: String
    /// The configuration key to fix, as the configuration's messages name it:
    /// `identities.podio.client_secret`.
    public var configKey: String

    public init(reason: String, configKey: String) {
        self.reason = reason
        self.configKey = configKey
    }

    public var description: String { "\(reason); fix \(configKey)" }
}
