#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig

/// One identity as `latchkey status` shows it: where its token lives, what state it is
/// in, when it was obtained and expires, whether a refresh token is there, which captures
/// a recipe's result holds, and the last failure of its token requests. Never a token, a
/// refresh token or a capture's value.
public struct IdentityStatus: Sendable, Equatable {
    /// Where the identity's token lives.
    public enum Source: String, Sendable {
        /// The token store every Latchkey process of the configuration shares.
        case store
        /// Its own secret in the configuration (`grant: static`).
        case `static`
        /// The memory of the running serve (`store: type: memory`): no other process sees it.
        case memory
    }

    public enum State: String, Sendable {
        case valid
        /// Past the time it is used until; see `detail` for whether it renews.
        case expired
        /// Someone must run `latchkey login`.
        case loginRequired = "login_required"
        /// None yet; the identity gets one by itself when first needed.
        case noToken = "no_token"
        /// A token request is out (only a running serve knows).
        case refreshing
        /// Token requests fail and no usable token is left; the next attempt comes after a
        /// back-off (only a running serve knows).
        case failing
        /// The IdP refused the identity's configuration; `detail` names the key to fix.
        /// Nothing is tried again until it changes; a token still held stays in use.
        case misconfigured
        /// Not visible to this process.
        case unknown
    }

    public var name: String
    public var grant: String
    public var source: Source
    public var state: State
    public var expiresAt: Date?
    /// When the token was obtained: the last login or refresh.
    public var obtainedAt: Date?
    public var hasRefreshToken: Bool
    /// Why, where the state alone does not say; never a secret.
    public var detail: String?
    /// The last failed token request known (to the running serve; to the store, only a
    /// misconfiguration), until a token replaces it.
    public var lastError: FailureRecord?
    /// A recipe identity's captures that its result holds, by name, in the order the
    /// recipe makes them (empty without a result); nil for the other grants, and where the
    /// result cannot be seen.
    public var captures: [String]?

    public init(name: String, grant: String, source: Source, state: State, expiresAt: Date? = nil, obtainedAt: Date? = nil,
                hasRefreshToken: Bool = false, detail: String? = nil, lastError: FailureRecord? = nil) {
        self.name = name
        self.grant = grant
        self.source = source
        self.state = state
        self.expiresAt = expiresAt
        self.obtainedAt = obtainedAt
        self.hasRefreshToken = hasRefreshToken
        self.detail = detail
        self.lastError = lastError
    }

    /// The names of the captures `token` holds, for a recipe identity.
    static func captures(of identity: IdentityConfig, in token: TokenSet?) -> [String]? {
        guard case .recipe(let recipe) = identity.grant else { return nil }
        return token.map(recipe.heldCaptureNames(in:)) ?? []
    }
}

extension IdentityStatus {
    /// An identity whose tokens the store keeps, from what it holds there. A token counts
    /// as valid until the time `serve` stops using it (its expiry less the clock skew). A
    /// misconfiguration a serve kept there (`failure`) stands until a token replaces it.
    public init(_ identity: IdentityConfig, stored token: TokenSet?, loggedOut: Bool, failure: FailureRecord? = nil, now: Date) {
        self.init(identity, token: token, loggedOut: loggedOut, now: now)
        lastError = failure
        if let problem = failure?.misconfiguration, !loggedOut {
            state = .misconfigured
            detail = problem.description
        }
    }

    private init(_ identity: IdentityConfig, token: TokenSet?, loggedOut: Bool, now: Date) {
        self.init(name: identity.name, grant: identity.grant.name, source: .store, state: .noToken)
        captures = Self.captures(of: identity, in: token)
        if loggedOut {
            state = .loginRequired
            detail = "logged out with `latchkey logout`; run `latchkey login \(identity.name)`"
            return
        }
        guard let token else {
            if identity.logsInInteractively {
                state = .loginRequired
                detail = "not logged in yet; run `latchkey login \(identity.name)`"
            } else if case .refreshToken = identity.grant {
                detail = "its configured refresh_token gets one when first needed"
            } else {
                detail = "gets one by itself when first needed"
            }
            return
        }
        expiresAt = token.expiresAt
        obtainedAt = token.obtainedAt
        hasRefreshToken = token.refreshToken != nil
        if let until = identity.timing.usableUntil(token), now >= until {
            if hasRefreshToken || identity.grantsByItself {
                state = .expired
                detail = "renewed when next needed"
            } else {
                state = .loginRequired
                detail = "expired, with nothing to renew it; run `latchkey login \(identity.name)`"
            }
        } else {
            state = .valid
        }
    }

    /// A static identity, from its configured secret: valid unless it is a JWT whose `exp`
    /// has passed, which only a new token fixes.
    public init(_ identity: IdentityConfig, staticToken: Result<String, SecretError>, now: Date) {
        self.init(name: identity.name, grant: identity.grant.name, source: .static, state: .valid)
        switch staticToken {
        case .success(let token):
            expiresAt = JWTClaims.expiry(of: token)
            if let expiresAt, expiresAt <= now {
                state = .expired
                detail = "a static token is never renewed; store a new one"
            }
        case .failure(let error):
            state = .noToken
            detail = "its token has no value: \(error.message)"
        }
    }

    /// An identity as the running serve holds it, with what only the serve knows: a token
    /// request in flight, a back-off after failures.
    public init(_ identity: IdentityConfig, live lifecycle: TokenLifecycle, source: Source, now: Date) {
        self.init(name: identity.name, grant: identity.grant.name, source: source, state: .noToken, lastError: lifecycle.lastFailure)
        // A seeded refresh token rides on a token without an access token: not a token yet.
        let held = lifecycle.token.flatMap { $0.accessToken.isEmpty ? nil : $0 }
        captures = Self.captures(of: identity, in: held)
        expiresAt = held?.expiresAt
        obtainedAt = held?.obtainedAt
        hasRefreshToken = lifecycle.token?.refreshToken != nil
        let usable = lifecycle.usable(now: now) != nil
        switch lifecycle.phase {
        case .acquiring(let kind):
            state = .refreshing
            detail = kind == .refresh ? "renewing with its refresh token" : "getting a token with its own credentials"
        case .backingOff(let until, let reason):
            state = usable ? .valid : .failing
            detail = "\(reason); next attempt at \(until.formatted(.iso8601))"
        case .loginRequired(let reason):
            state = .loginRequired
            detail = reason
        case .misconfigured(let problem):
            state = .misconfigured
            detail = problem.description
        case .idle:
            state = usable ? .valid : held == nil ? .noToken : .expired
        }
    }

    /// An identity of a configuration that keeps tokens in memory: only the running serve
    /// knows its state.
    public static func inMemory(_ identity: IdentityConfig) -> IdentityStatus {
        IdentityStatus(name: identity.name, grant: identity.grant.name, source: .memory, state: .unknown,
                       detail: "the configuration keeps tokens in memory (store: type: memory), which only the running serve sees")
    }
}
