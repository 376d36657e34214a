/// An error response of an OAuth endpoint: RFC 6749 §5.2 (token), RFC 8628 §3.5 (device
/// flow), RFC 7009 §2.2.1 (revocation), with the HTTP status it came with.
public struct OAuthError: Sendable, Equatable {
    /// The `error` code, e.g. `invalid_grant`.
    public var error: String
    /// `error_description`: text from the server, kept to one line of at most
    /// `maxDescriptionLength` characters.
    public var errorDescription: String?
    public var errorURI: String?
    public var status: Int
    /// From `Retry-After`, when the server sent one.
    public var retryAfter: Duration?

    public static let maxDescriptionLength = 200

    public init(error: String, errorDescription: String? = nil, errorURI: String? = nil, status: Int, retryAfter: Duration? = nil) {
        self.error = Self.oneLine(error)
        self.errorDescription = errorDescription.map(Self.oneLine)
        self.errorURI = errorURI.map(Self.oneLine)
        self.status = status
        self.retryAfter = retryAfter
    }

    /// The registered codes this engine acts on; nil for any other.
    public var code: Code? { Code(rawValue: error) }

    public enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        /// The grant (refresh token, code, password, device code) is invalid, expired or
        /// revoked: repeating the request cannot help.
        case invalidGrant = "invalid_grant"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case invalidScope = "invalid_scope"
        case invalidTarget = "invalid_target"
        case serverError = "server_error"
        case temporarilyUnavailable = "temporarily_unavailable"
        case unsupportedTokenType = "unsupported_token_type"
        /// Device flow: the user has not finished yet; poll again after the interval.
        case authorizationPending = "authorization_pending"
        /// Device flow: poll again, with the interval increased by 5 seconds.
        case slowDown = "slow_down"
        /// Device flow or authorization: the user said no.
        case accessDenied = "access_denied"
        /// Device flow: the device code expired; start over.
        case expiredToken = "expired_token"
    }

    /// Server text made safe for a one-line message: control characters become spaces,
    /// and it is cut at `maxDescriptionLength` characters.
    static func oneLine(_ text: String) -> String {
        let scalars = text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }
        let line = String(String.UnicodeScalarView(scalars))
        return line.count > maxDescriptionLength ? String(line.prefix(maxDescriptionLength)) + "…" : line
    }
}
