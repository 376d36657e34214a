#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A successful token response (RFC 6749 §5.1), read leniently: the optional fields of a
/// wrong type are ignored rather than failing a token that works.
public struct TokenResponse: Sendable, Equatable {
    public var accessToken: String
    public var tokenType: String?
    /// `expires_in`, a number or a numeric string (as some servers send it); nil when
    /// absent, unreadable or not positive.
    public var expiresIn: Duration?
    /// nil when the server issued none. After a refresh that means the old refresh token
    /// stays valid (RFC 6749 §6): the caller keeps it.
    public var refreshToken: String?
    public var scope: String?
    public var idToken: String?
    /// RFC 8693 §2.2.1, for token exchange.
    public var issuedTokenType: String?

    public init(
        accessToken: String, tokenType: String? = nil, expiresIn: Duration? = nil, refreshToken: String? = nil,
        scope: String? = nil, idToken: String? = nil, issuedTokenType: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.scope = scope
        self.idToken = idToken
        self.issuedTokenType = issuedTokenType
    }

    /// Reads a token endpoint's answer; anything but a token response is thrown as what it
    /// is (OAuth error, unexpected status, unusable body). `now` reads `Retry-After` dates.
    public static func parse(_ response: AuthHTTPResponse, now: Date) throws(TokenEndpointError) -> TokenResponse {
        try OAuthResponse.decode(Body.self, from: response, now: now).response
    }

    /// What Latchkey keeps: expiry from `expires_in`, else the access token's JWT `exp`,
    /// else unknown. `refreshToken` is nil when none was issued.
    public func tokenSet(obtainedAt now: Date) -> TokenSet {
        let expiresAt = expiresIn.map { now.addingTimeInterval(Double($0.components.seconds)) }
            ?? JWTClaims.expiry(of: accessToken)
        return TokenSet(
            accessToken: accessToken, tokenType: tokenType, refreshToken: refreshToken, expiresAt: expiresAt,
            scope: scope, idToken: idToken, obtainedAt: now
        )
    }

    private struct Body: Decodable {
        var response: TokenResponse

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresIn = "expires_in"
            case refreshToken = "refresh_token"
            case scope
            case idToken = "id_token"
            case issuedTokenType = "issued_token_type"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let accessToken = try container.decode(String.self, forKey: .accessToken)
            guard !accessToken.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: .accessToken, in: container, debugDescription: "empty")
            }
            func text(_ key: CodingKeys) -> String? { try? container.decodeIfPresent(String.self, forKey: key) }
            response = TokenResponse(
                accessToken: accessToken,
                tokenType: text(.tokenType),
                expiresIn: (try? container.decodeIfPresent(LenientSeconds.self, forKey: .expiresIn))?.duration,
                refreshToken: text(.refreshToken).flatMap { $0.isEmpty ? nil : $0 },
                scope: text(.scope),
                idToken: text(.idToken),
                issuedTokenType: text(.issuedTokenType)
            )
        }
    }
}

/// A lifetime in seconds sent as a JSON number or a numeric string (`"3600"`). Zero and
/// negative values are dropped: treating them as "already expired" would make a token
/// that works unusable.
struct LenientSeconds: Decodable {
    var duration: Duration?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let seconds = (try? container.decode(Double.self))
            ?? (try? container.decode(String.self)).flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard let seconds, seconds.isFinite, seconds > 0, seconds < Double(Int64.max) else { return }
        duration = .seconds(seconds)
    }
}
