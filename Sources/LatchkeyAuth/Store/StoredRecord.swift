#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the store keeps for one identity: its token, the cookie jar the proxy keeps for it
/// (`jar: proxy`) and why its token requests fail until its configuration is fixed, in the
/// same file and under the same seal.
struct StoredRecord: Codable, Equatable, Sendable {
    var token: TokenSet?
    /// Netscape cookie-file lines, as libcurl's cookie engine exports them; absent when the
    /// identity keeps no cookies.
    var cookies: [String]?
    /// A person logged the identity out (`latchkey logout`): it stays out, even where it
    /// could get a token by itself (a password in the configuration), until a token is
    /// saved again (`latchkey login`). The mark keeps no cookies: the logout ends the web
    /// session too.
    var loggedOut = false
    /// The misconfiguration a running serve met (`TokenStore.saveFailure`); a saved token
    /// removes it.
    var failure: FailureRecord?

    /// Nothing left to keep: the file goes.
    var isEmpty: Bool { token == nil && (cookies ?? []).isEmpty && !loggedOut && failure == nil }

    enum CodingKeys: String, CodingKey {
        case token, cookies, logged_out, last_error
    }

    init(token: TokenSet? = nil, cookies: [String]? = nil, loggedOut: Bool = false, failure: FailureRecord? = nil) {
        self.token = token
        self.cookies = cookies
        self.loggedOut = loggedOut
        self.failure = failure
    }

    /// A new token (a login, a refresh) ends a logout and a misconfiguration.
    mutating func keep(_ token: TokenSet?) {
        self.token = token
        guard token != nil else { return }
        loggedOut = false
        failure = nil
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decodeIfPresent(TokenSet.self, forKey: .token)
        cookies = try container.decodeIfPresent([String].self, forKey: .cookies)
        loggedOut = try container.decodeIfPresent(Bool.self, forKey: .logged_out) ?? false
        failure = try container.decodeIfPresent(FailureRecord.self, forKey: .last_error)
    }

    /// `cookies`, `logged_out` and `last_error` only when set: the files of identities that
    /// keep no cookies, were never logged out and never misconfigured keep the bytes they
    /// always had.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(token, forKey: .token)
        try container.encodeIfPresent(cookies, forKey: .cookies)
        if loggedOut { try container.encode(true, forKey: .logged_out) }
        try container.encodeIfPresent(failure, forKey: .last_error)
    }
}

/// A failure in the store, with the time as Unix seconds like a token's.
extension FailureRecord: Codable {
    enum CodingKeys: String, CodingKey {
        case message, config_key, at
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(message: try container.decode(String.self, forKey: .message),
                  configKey: try container.decodeIfPresent(String.self, forKey: .config_key),
                  at: Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .at)))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(message, forKey: .message)
        try container.encodeIfPresent(configKey, forKey: .config_key)
        try container.encode(at.timeIntervalSince1970, forKey: .at)
    }
}

/// A token in the store, with snake_case keys like the OAuth answer it came from (RFC 6749
/// §5.1) and times as Unix seconds; a recipe's result with its `captures` beside.
extension TokenSet: Codable {
    enum CodingKeys: String, CodingKey {
        case access_token, token_type, refresh_token, expires_at, scope, id_token, obtained_at, captures
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            accessToken: try container.decode(String.self, forKey: .access_token),
            tokenType: try container.decodeIfPresent(String.self, forKey: .token_type),
            refreshToken: try container.decodeIfPresent(String.self, forKey: .refresh_token),
            expiresAt: try container.decodeIfPresent(Double.self, forKey: .expires_at).map(Date.init(timeIntervalSince1970:)),
            scope: try container.decodeIfPresent(String.self, forKey: .scope),
            idToken: try container.decodeIfPresent(String.self, forKey: .id_token),
            obtainedAt: Date(timeIntervalSince1970: try container.decode(Double.self, forKey: .obtained_at)),
            // Absent from OAuth tokens, and from every entry written before recipes.
            captures: try container.decodeIfPresent([String: String].self, forKey: .captures) ?? [:]
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accessToken, forKey: .access_token)
        try container.encodeIfPresent(tokenType, forKey: .token_type)
        try container.encodeIfPresent(refreshToken, forKey: .refresh_token)
        try container.encodeIfPresent(expiresAt?.timeIntervalSince1970, forKey: .expires_at)
        try container.encodeIfPresent(scope, forKey: .scope)
        try container.encodeIfPresent(idToken, forKey: .id_token)
        try container.encode(obtainedAt.timeIntervalSince1970, forKey: .obtained_at)
        // Only for a recipe: an OAuth token's entry keeps the bytes it always had.
        if !captures.isEmpty { try container.encode(captures, forKey: .captures) }
    }
}
