#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where an identity's tokens come from: a token endpoint and a grant, or a stored token.
public protocol TokenSource: Sendable {
    /// Whether `.grant` works without a person (see `TokenLifecycle.canGrant`).
    var canGrant: Bool { get }
    /// Whether a token an upstream refused can be replaced: false for a static token, whose
    /// 401 goes back to the client.
    var renewable: Bool { get }
    /// Runs one token request. Never called twice at once for the same identity.
    func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet
    /// Asks the server whether it still accepts a token restored at start (as Auth0's SDKs
    /// check a stored token before using it); nil when the identity is not set to check.
    func check(_ token: TokenSet, now: Date) async throws(AcquisitionFailure) -> TokenValidity?
    /// The values of `token` that log lines must mask like credentials (a recipe's secret
    /// captures, which routes inject where a log could show them).
    func secretValues(of token: TokenSet) -> [String]
}

extension TokenSource {
    /// Most sources trust a restored token until an upstream refuses it.
    public func check(_ token: TokenSet, now: Date) async throws(AcquisitionFailure) -> TokenValidity? { nil }

    /// None by default: no log line is written with a token in it, and the credentials are
    /// masked already.
    public func secretValues(of token: TokenSet) -> [String] { [] }
}

/// Keeps tokens across restarts: `FileTokenStore` by default, `MemoryTokenStore` for runs
/// that keep nothing. Every implementation passes the one conformance suite
/// (TokenStoreConformanceTests).
public protocol TokenStore: Sendable {
    func load(identity: String) async throws -> TokenSet?
    /// Called before a new token is handed out, so that a rotated refresh token is kept
    /// before it is ever used; nil removes the token and keeps the cookies. A token ends a
    /// logout.
    func save(_ token: TokenSet?, identity: String) async throws
    /// Takes the identity's refresh lock (`RefreshLease`) when no one holds it; never
    /// waits for it. Throws when the store cannot be reached.
    func acquireRefreshLock(identity: String) async throws -> RefreshLockAttempt
    /// Lets go of `lease`, if it is still the one holding the lock.
    func releaseRefreshLock(_ lease: RefreshLease) async
    /// A person logged the identity out (`latchkey logout`, which holds the refresh lock
    /// meanwhile, so that no refresh in flight saves a token over the mark): its entry
    /// goes, its cookies with it, and `isLoggedOut` answers true until a token is saved
    /// again (`latchkey login`), so that an identity able to get a token by itself does not
    /// silently log back in. Returns the token it removed, in the same step, for the caller
    /// to revoke.
    func logOut(identity: String) async throws -> TokenSet?
    /// Whether the identity was logged out by a person and has had no token since.
    func isLoggedOut(identity: String) async throws -> Bool
    /// Keeps why the identity's token requests fail until its configuration changes (a
    /// `FailureRecord` with its `configKey`) beside its token, where `latchkey status` reads
    /// it; nil removes it, and so do a saved token and a logout. Not a secret, though a
    /// store that seals its entries seals it with the rest.
    func saveFailure(_ failure: FailureRecord?, identity: String) async throws
    /// What `saveFailure` kept, unless a token or a logout replaced it since.
    func loadFailure(identity: String) async throws -> FailureRecord?
    /// The cookie jar the proxy keeps for the identity (`jar: proxy`), as Netscape
    /// cookie-file lines; empty when there is none.
    func loadCookies(identity: String) async throws -> [String]
    /// Replaces the identity's cookies and keeps its token; an empty list clears them. A
    /// logged-out identity keeps none, and saving cookies does not end its logout.
    func saveCookies(_ cookies: [String], identity: String) async throws
}

/// The store that forgets on exit, for identities that need no persistence. Its refresh
/// lock excludes the identities of this process that share it.
public actor MemoryTokenStore: TokenStore {
    private var tokens: [String: TokenSet] = [:]
    private var cookies: [String: [String]] = [:]
    private var failures: [String: FailureRecord] = [:]
    private var loggedOut: Set<String> = []
    /// Identity → owner of its lease.
    private var refreshLocks: [String: String] = [:]

    public init() {}

    public func load(identity: String) -> TokenSet? { tokens[identity] }

    public func save(_ token: TokenSet?, identity: String) {
        tokens[identity] = token
        if token != nil {
            loggedOut.remove(identity)
            failures[identity] = nil
        }
    }

    public func logOut(identity: String) -> TokenSet? {
        loggedOut.insert(identity)
        cookies[identity] = nil
        failures[identity] = nil
        return tokens.removeValue(forKey: identity)
    }

    public func isLoggedOut(identity: String) -> Bool { loggedOut.contains(identity) }

    public func saveFailure(_ failure: FailureRecord?, identity: String) { failures[identity] = failure }

    public func loadFailure(identity: String) -> FailureRecord? { failures[identity] }

    public func loadCookies(identity: String) -> [String] { cookies[identity] ?? [] }

    public func saveCookies(_ cookies: [String], identity: String) {
        self.cookies[identity] = cookies.isEmpty || loggedOut.contains(identity) ? nil : cookies
    }

    public func acquireRefreshLock(identity: String) throws -> RefreshLockAttempt {
        guard refreshLocks[identity] == nil else { return .heldElsewhere }
        let lease = RefreshLease(identity: identity, owner: try RefreshLease.newOwner(), expiresAt: nil)
        refreshLocks[identity] = lease.owner
        return .acquired(lease)
    }

    public func releaseRefreshLock(_ lease: RefreshLease) {
        if refreshLocks[lease.identity] == lease.owner { refreshLocks[lease.identity] = nil }
    }
}
