#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig

/// How a token request gets its token.
public enum AcquisitionKind: Sendable, Equatable {
    /// With the refresh token.
    case refresh
    /// With the identity's own credentials (password, client secret, a signed assertion…):
    /// the first acquisition, or re-authentication after a refresh was refused.
    case grant
}

/// One identity's token and what is being done about it, as a pure state machine: every
/// input carries the time, every output says which token request (if any) to start. The
/// caller runs requests one at a time per identity, which makes them single-flight.
public struct TokenLifecycle: Sendable {
    public enum Phase: Sendable, Equatable {
        case idle
        case acquiring(AcquisitionKind)
        /// The last token request failed; no new one before `until`.
        case backingOff(until: Date, reason: String)
        case loginRequired(reason: String)
        /// The IdP refused the identity's configuration: no token request until its secrets
        /// (`credentialsChanged`) or its configuration (a new lifecycle) change.
        case misconfigured(Misconfiguration)
    }

    /// What a request that needs a token is told.
    public enum Demand: Sendable, Equatable {
        case ready(TokenSet, generation: UInt64)
        /// Wait for the token request in flight; `start` is set when this call began one.
        case wait(start: AcquisitionKind?)
        case unavailable(IdentityUnavailable)
    }

    public private(set) var token: TokenSet?
    /// Counts tokens; a request remembers the generation it used, so that a 401 for an
    /// old token does not throw away a newer one.
    public private(set) var generation: UInt64 = 0
    public private(set) var phase: Phase = .idle
    /// The last token request's failure, until a token arrives.
    public private(set) var lastFailure: FailureRecord?
    /// When a request last used a token (`used(at:)`): the background refresh runs only
    /// for an identity in use.
    public private(set) var lastUse: Date?
    /// The current token was refused by an upstream: never handed out again.
    private var rejected = false
    private var failures = 0
    public let timing: TokenTiming
    public let backoff: Backoff
    /// The identity can get a token without a person (password, client credentials, a
    /// custom grant, a signed assertion); false for authorization code and device grants.
    public let canGrant: Bool
    /// Refresh in the background even when no request uses the identity (`keep_warm`).
    public let keepWarm: Bool

    public init(token: TokenSet?, timing: TokenTiming, backoff: Backoff, canGrant: Bool, keepWarm: Bool = false) {
        self.token = token
        self.generation = token == nil ? 0 : 1
        self.timing = timing
        self.backoff = backoff
        self.canGrant = canGrant
        self.keepWarm = keepWarm
        if token == nil, !canGrant {
            phase = .loginRequired(reason: "no token yet")
        }
    }

    /// The token to attach now, if there is one that may still be used.
    public func usable(now: Date) -> (token: TokenSet, generation: UInt64)? {
        guard let token, !rejected else { return nil }
        if let until = timing.usableUntil(token), now >= until { return nil }
        return (token, generation)
    }

    /// A request needs a token.
    public mutating func demand(now: Date) -> Demand {
        if let (token, generation) = usable(now: now) { return .ready(token, generation: generation) }
        switch phase {
        case .acquiring:
            return .wait(start: nil)
        case .loginRequired(let reason):
            return .unavailable(.loginRequired(reason: reason))
        case .misconfigured(let problem):
            return .unavailable(.misconfigured(problem))
        case .backingOff(let until, let reason) where now < until:
            return .unavailable(.failing(reason: reason, retryAt: until))
        case .idle, .backingOff:
            guard let kind = nextAcquisition else {
                phase = .loginRequired(reason: "the token expired and cannot be renewed")
                return demand(now: now)
            }
            phase = .acquiring(kind)
            return .wait(start: kind)
        }
    }

    /// An upstream refused the token of `generation`: stop using it and get another,
    /// unless a newer one exists already.
    public mutating func rejected(generation rejectedGeneration: UInt64, now: Date) -> Demand {
        if rejectedGeneration == generation, token != nil {
            rejected = true
            // A refused token ends a back-off that was only waiting on a proactive refresh.
            if case .backingOff = phase { phase = .idle }
        }
        return demand(now: now)
    }

    /// A request used the token at `now`: it keeps the background refresh going.
    public mutating func used(at now: Date) {
        lastUse = now
    }

    /// A timer fired: starts the proactive refresh when it is due, or ends a back-off.
    public mutating func tick(now: Date) -> AcquisitionKind? {
        if case .backingOff(let until, _) = phase {
            guard now >= until else { return nil }
            phase = .idle
        }
        guard phase == .idle, let refreshAt = proactiveRefreshAt, now >= refreshAt, let kind = nextAcquisition else { return nil }
        phase = .acquiring(kind)
        return kind
    }

    /// When the current token is renewed in the background: its `refreshAt`, if a request
    /// used the identity within one token lifetime (`expiresAt − obtainedAt`) before that
    /// moment, or always with `keepWarm`. An identity nobody uses stops refreshing, and its
    /// next request renews on demand; a use of a token still held brings the refresh back
    /// (at once when its moment has passed).
    private var proactiveRefreshAt: Date? {
        guard !rejected, let (refreshAt, lifetime) = refreshPlan else { return nil }
        if keepWarm { return refreshAt }
        guard let lastUse, refreshAt.timeIntervalSince(lastUse) <= lifetime else { return nil }
        return refreshAt
    }

    /// The current token's background refresh moment and lifetime; nil when it is never
    /// refreshed in the background.
    private var refreshPlan: (at: Date, lifetime: TimeInterval)? {
        // Nothing to renew it with (a login's token without a refresh token): no timer
        // that would find nothing to do, again and again, once its moment has come.
        guard let token, token.refreshToken != nil || canGrant,
              // A token with a refresh moment has an expiry (TokenTiming.refreshAt).
              let refreshAt = timing.refreshAt(token), let expiresAt = token.expiresAt
        else { return nil }
        return (refreshAt, expiresAt.timeIntervalSince(token.obtainedAt))
    }

    /// The token a successful request of `kind` leaves: what it answered, completed from
    /// the current token. This, not the bare answer, is what must be stored.
    public func completed(_ new: TokenSet, kind: AcquisitionKind) -> TokenSet {
        var new = new
        // RFC 6749 §6: a refresh answer without a refresh token means the old one stays.
        if kind == .refresh, new.refreshToken == nil { new.refreshToken = token?.refreshToken }
        return new
    }

    /// The token request of `kind` succeeded.
    public mutating func succeeded(_ new: TokenSet, kind: AcquisitionKind) {
        token = completed(new, kind: kind)
        generation += 1
        rejected = false
        failures = 0
        lastFailure = nil
        phase = .idle
    }

    /// The token request of `kind` failed. Returns the request to start right away (a
    /// re-authentication after a refused refresh), if any. `unit` is a random number in
    /// [0, 1) for the back-off's jitter.
    public mutating func failed(_ failure: AcquisitionFailure, kind: AcquisitionKind, now: Date, unit: Double) -> AcquisitionKind? {
        lastFailure = FailureRecord(message: failure.message, configKey: failure.misconfiguration?.configKey, at: now)
        if let problem = failure.misconfiguration {
            // RFC 6749 §5.2: the same request would be refused the same way. A token still
            // held stays in use until it expires.
            failures = 0
            phase = .misconfigured(problem)
            return nil
        }
        if kind == .refresh, failure.kind == .rejected {
            // The refresh token is dead; never send it again.
            token?.refreshToken = nil
            if canGrant {
                phase = .acquiring(.grant)
                return .grant
            }
            token = nil
            phase = .loginRequired(reason: "the refresh token was refused: \(failure.message)")
            return nil
        }
        failures += 1
        let delay = backoff.delay(afterFailures: failures, retryAfter: failure.retryAfter, unit: unit)
        phase = .backingOff(until: now.addingTimeInterval(delay.seconds), reason: failure.message)
        return nil
    }

    /// Some of the identity's secrets changed: a misconfiguration may be fixed, and the next
    /// request (or the background refresh) tries again. True when it ended one.
    public mutating func credentialsChanged() -> Bool {
        guard case .misconfigured = phase else { return false }
        phase = .idle
        return true
    }

    /// A person logged in (or a token was restored): start over with `token`.
    public mutating func replace(with new: TokenSet) {
        succeeded(new, kind: .grant)
    }

    /// Forgets the token; a person must log in again, or the grant runs anew where it can.
    /// `untilLogin`: a person logged the identity out, so it waits for a login even when
    /// it could get a token by itself.
    public mutating func logOut(reason: String, untilLogin: Bool = false) {
        token = nil
        rejected = false
        failures = 0
        generation += 1
        phase = canGrant && !untilLogin ? .idle : .loginRequired(reason: reason)
    }

    /// When `tick` has something to do next; nil when nothing is scheduled.
    public func nextTick() -> Date? {
        switch phase {
        case .backingOff(let until, _): until
        case .idle: proactiveRefreshAt
        case .acquiring, .loginRequired, .misconfigured: nil
        }
    }

    private var nextAcquisition: AcquisitionKind? {
        if token?.refreshToken != nil { return .refresh }
        return canGrant ? .grant : nil
    }
}
