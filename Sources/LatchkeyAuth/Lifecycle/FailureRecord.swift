#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A failed token request as status reports it (`last_error`): what went wrong, the
/// configuration key to fix when the IdP refused the configuration, and when. Never a
/// secret.
public struct FailureRecord: Sendable, Equatable {
    public var message: String
    /// Set for a `Misconfiguration`.
    public var configKey: String?
    public var at: Date

    public init(message: String, configKey: String? = nil, at: Date) {
        self.message = message
        self.configKey = configKey
        self.at = at
    }

    /// The misconfiguration it records, if it is one.
    public var misconfiguration: Misconfiguration? {
        configKey.map { Misconfiguration(reason: message, configKey: $0) }
    }
}
