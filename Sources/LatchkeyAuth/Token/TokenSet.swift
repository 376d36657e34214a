#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a token endpoint granted, as Latchkey keeps it. Times are wall-clock so that a
/// persisted token keeps its meaning across restarts.
public struct TokenSet: Sendable, Equatable {
    public var accessToken: String
    /// "Bearer" usually; kept for the record, injection uses the route's template.
    public var tokenType: String?
    public var refreshToken: String?
    /// When the access token stops being valid, from `expires_in` or the JWT `exp`;
    /// nil when the server said neither (then it is used until an upstream rejects it).
    public var expiresAt: Date?
    public var scope: String?
    public var idToken: String?
    public var obtainedAt: Date
    /// A recipe identity's captures by name (`accessToken` is its token capture's value);
    /// empty for OAuth tokens.
    public var captures: [String: String]

    public init(
        accessToken: String, tokenType: String? = "Bearer", refreshToken: String? = nil, expiresAt: Date? = nil,
        scope: String? = nil, idToken: String? = nil, obtainedAt: Date, captures: [String: String] = [:]
    ) {
        self.captures = captures
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.scope = scope
        self.idToken = idToken
        self.obtainedAt = obtainedAt
    }
}
