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
}

extension TokenSource {
    /// Most sources trust a restored token until an upstream refuses it.
    public func check(_ token: TokenSet, now: Date) async throws(AcquisitionFailure) -> TokenValidity? { nil }
}

/// Keeps tokens across restarts: `FileTokenStore` by default, `MemoryTokenStore` for runs
/// that keep nothing. Every implementation passes the one conformance suite
/// (TokenStoreConformanceTests).
public protocol TokenStore: Sendable {
    func load(identity: String) async throws -> TokenSet?
    /// Called before a new token is handed out, so that a rotated refresh token is kept
    /// before it is ever used; nil removes the token and keeps the cookies.
    func save(_ token: TokenSet?, identity: String) async throws
    /// The cookie jar the proxy keeps for the identity (`jar: proxy`), as Netscape
    /// cookie-file lines; empty when there is none.
    func loadCookies(identity: String) async throws -> [String]
    /// Replaces the identity's cookies and keeps its token; an empty list clears them (what
    /// `latchkey logout` does besides removing the token).
    func saveCookies(_ cookies: [String], identity: String) async throws
}

/// The store that forgets on exit, for identities that need no persistence.
public actor MemoryTokenStore: TokenStore {
    private var tokens: [String: TokenSet] = [:]
    private var cookies: [String: [String]] = [:]

    public init() {}

    public func load(identity: String) -> TokenSet? { tokens[identity] }

    public func save(_ token: TokenSet?, identity: String) {
        tokens[identity] = token
    }

    public func loadCookies(identity: String) -> [String] { cookies[identity] ?? [] }

    public func saveCookies(_ cookies: [String], identity: String) {
        self.cookies[identity] = cookies.isEmpty ? nil : cookies
    }
}
