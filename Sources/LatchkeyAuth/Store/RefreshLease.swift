#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyUpstream

/// The right to refresh one identity's token, across every process that shares the store:
/// taken just before the token request, held until its answer is saved, then released
/// (STYLE habit 9; oauth2-proxy refreshes under a lock and reloads the session first).
/// With rotating refresh tokens this is what keeps two replicas from spending the same
/// refresh token: the second one waits, then finds the first one's token in the store.
public struct RefreshLease: Sendable, Equatable {
    public let identity: String
    /// Random for each lease: a release frees only the lease it names, never one another
    /// process took after this one expired.
    public let owner: String
    /// When a holder that died without releasing stops blocking the others; nil for a lock
    /// that dies with its process (flock).
    public let expiresAt: Date?

    public init(identity: String, owner: String, expiresAt: Date?) {
        self.identity = identity
        self.owner = owner
        self.expiresAt = expiresAt
    }

    /// How long an expiring lease lasts: longer than anything done under it. A token request
    /// ends within its timeout, discovery may come before it, and the save after it.
    public static let duration = AuthHTTPRequest.defaultTimeout * 2

    /// How often a process waiting for another's refresh asks for the lock again: short
    /// beside a token request, so that the waiting requests get the new token soon after it
    /// is saved; one small read each time.
    public static let poll = Duration.milliseconds(50)

    /// A fresh random owner token.
    static func newOwner() throws(TokenStoreError) -> String {
        do {
            return try SecureRandom.urlSafeString(byteCount: 16)
        } catch {
            throw TokenStoreError(.writeFailed, "cannot make a refresh lock owner: \(error)")
        }
    }
}

/// What an attempt at an identity's refresh lock gives.
public enum RefreshLockAttempt: Sendable, Equatable {
    case acquired(RefreshLease)
    /// Another process, or another store on the same data, holds it: its token will be in
    /// the store when it lets go.
    case heldElsewhere
}
