#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a token request did not produce a token, as the lifecycle needs to know it.
public struct AcquisitionFailure: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The IdP refused the grant itself (`invalid_grant`: a revoked or rotated refresh
        /// token, a wrong password). Retrying the same request cannot help.
        case rejected
        /// The IdP could not be reached, timed out, answered 5xx/429 or something that is
        /// not an OAuth answer. Worth retrying later.
        case transient
        /// The IdP refused the identity's configuration (see `Misconfiguration`): no retry
        /// until `configKey`, or another of its secrets, changes.
        case misconfigured(configKey: String)
    }

    public var kind: Kind
    /// One line for logs and error bodies; never a secret.
    public var message: String
    /// What the IdP asked for with `Retry-After`.
    public var retryAfter: Duration?

    public init(_ kind: Kind, _ message: String, retryAfter: Duration? = nil) {
        self.kind = kind
        self.message = message
        self.retryAfter = retryAfter
    }

    /// What the failure says about the configuration, if it is a misconfiguration.
    public var misconfiguration: Misconfiguration? {
        guard case .misconfigured(let configKey) = kind else { return nil }
        return Misconfiguration(reason: message, configKey: configKey)
    }
}

/// Why a request cannot have a token now.
public enum IdentityUnavailable: Error, Sendable, Equatable {
    /// Nothing Latchkey can do alone: someone must run `latchkey login`.
    case loginRequired(reason: String)
    /// Token requests are failing; the next attempt is at `retryAt`.
    case failing(reason: String, retryAt: Date)
    /// The IdP refused the identity's configuration: no attempt until it is fixed.
    case misconfigured(Misconfiguration)
}
