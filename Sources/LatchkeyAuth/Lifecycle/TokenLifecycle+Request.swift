#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A token request's course while other things happen to the identity: it waits for the
/// store's refresh lock, then goes out, and meanwhile a login, another process's refresh
/// (read from the store) or a logout may replace the token it was started for. A request
/// remembers the `generation` it was started at; these events decide what still applies.
extension TokenLifecycle {
    /// What a token request does once it holds the refresh lock.
    public struct LockedRequest: Sendable, Equatable {
        /// The request to make now; nil when a token came meanwhile and none is needed.
        public var kind: AcquisitionKind?
        /// The store's newer token was taken (worth an event).
        public var tookStoredToken: Bool
    }

    /// What follows a failed token request.
    public enum FailureAction: Sendable, Equatable {
        /// The token was replaced while the request was out: its failure changes nothing.
        case ignored
        /// Start this request at once (a re-authentication after a refused refresh).
        case retry(AcquisitionKind)
        /// Nothing now: a back-off, or a token still held until it expires.
        case wait
        /// A person must log in: the store forgets the token.
        case loginRequired(reason: String)
        /// The IdP refused the identity's configuration: keep the failure where
        /// `latchkey status` reads it.
        case misconfigured(FailureRecord?)
    }

    /// Whether the store's `stored` token is newer than the one held. Access tokens are
    /// compared, not whole values: a token read back from a file may differ in the last
    /// bit of its times, and one whose refresh token was just refused differs only there.
    public func isNewer(_ stored: TokenSet) -> Bool {
        stored.accessToken != token?.accessToken && stored.obtainedAt > token?.obtainedAt ?? .distantPast
    }

    /// A request of `planned`, started at `generation`, holds the refresh lock; the store
    /// holds `stored` (the winner's double check, as oauth2-proxy reloads the session before
    /// it refreshes). A newer stored token is taken; if it, or anything else since
    /// `generation`, gave a token that may be used, no request is needed.
    public mutating func lockTaken(planned: AcquisitionKind, startedAt generation: UInt64, stored: TokenSet?, now: Date) -> LockedRequest {
        let newer = stored.flatMap { isNewer($0) ? $0 : nil }
        guard newer != nil || generation != self.generation else { return LockedRequest(kind: planned, tookStoredToken: false) }
        if let newer { replace(with: newer) }
        let kind: AcquisitionKind? = if case .wait(let start?) = demand(now: now) { start } else { nil }
        return LockedRequest(kind: kind, tookStoredToken: newer != nil)
    }

    /// Whether nothing replaced the token since a request started at `generation`: a token
    /// another process stored meanwhile wins, and neither the request's answer nor its
    /// failure may replace it (or clear the store under a fresh login).
    public func isCurrent(startedAt generation: UInt64) -> Bool {
        generation == self.generation
    }

    /// The request of `kind` started at `generation` failed. `unit` is a random number in
    /// [0, 1) for the back-off's jitter.
    public mutating func failed(_ failure: AcquisitionFailure, kind: AcquisitionKind, startedAt generation: UInt64, now: Date,
                                unit: Double) -> FailureAction {
        guard isCurrent(startedAt: generation) else { return .ignored }
        if let next = failed(failure, kind: kind, now: now, unit: unit) { return .retry(next) }
        switch phase {
        case .loginRequired(let reason): return .loginRequired(reason: reason)
        case .misconfigured: return .misconfigured(lastFailure)
        default: return .wait
        }
    }
}
