#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The claims of a JWT Latchkey signs: RFC 7519 §4.1's registered claims that RFC 7523
/// assertions use, plus extra string claims such as `scope`.
public struct JWTClaimSet: Encodable, Sendable, Equatable {
    public var issuer: String
    public var subject: String?
    /// Encoded as a string when there is one audience, an array otherwise (RFC 7519 §4.1.3).
    public var audience: [String]
    public var issuedAt: Date
    public var notBefore: Date?
    public var expiresAt: Date
    public var jwtID: String
    /// Claims beyond the registered ones; a name that collides with one fails encoding.
    public var extra: [String: String]

    public init(
        issuer: String, subject: String? = nil, audience: [String], issuedAt: Date,
        notBefore: Date? = nil, expiresAt: Date, jwtID: String, extra: [String: String] = [:]
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.issuedAt = issuedAt
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.jwtID = jwtID
        self.extra = extra
    }

    /// The registered claim names, which `extra` must not reuse.
    static let registeredNames: Set<String> = ["iss", "sub", "aud", "iat", "nbf", "exp", "jti"]

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ClaimName.self)
        try container.encode(issuer, forKey: "iss")
        try container.encodeIfPresent(subject, forKey: "sub")
        if audience.count == 1 {
            try container.encode(audience[0], forKey: "aud")
        } else {
            try container.encode(audience, forKey: "aud")
        }
        try container.encode(Self.numericDate(issuedAt), forKey: "iat")
        try container.encodeIfPresent(notBefore.map(Self.numericDate), forKey: "nbf")
        try container.encode(Self.numericDate(expiresAt), forKey: "exp")
        try container.encode(jwtID, forKey: "jti")
        for (name, value) in extra {
            guard !Self.registeredNames.contains(name) else {
                throw EncodingError.invalidValue(value, EncodingError.Context(
                    codingPath: [ClaimName(stringValue: name)],
                    debugDescription: "extra claim \(name) would replace a registered claim"
                ))
            }
            try container.encode(value, forKey: ClaimName(stringValue: name))
        }
    }

    /// RFC 7519 §2 NumericDate in whole seconds: some token endpoints (Google's among them)
    /// reject fractional ones.
    private static func numericDate(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }

    private struct ClaimName: CodingKey, ExpressibleByStringLiteral {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
        init(stringLiteral value: String) { stringValue = value }
    }
}
