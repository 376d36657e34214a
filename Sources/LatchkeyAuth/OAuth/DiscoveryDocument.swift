#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Authorization server metadata (RFC 8414 §2, OpenID Connect Discovery §3): where the
/// endpoints of an issuer are.
public struct DiscoveryDocument: Sendable, Equatable, Decodable {
    public var issuer: String
    public var authorizationEndpoint: String?
    public var tokenEndpoint: String?
    public var deviceAuthorizationEndpoint: String?
    public var userinfoEndpoint: String?
    public var introspectionEndpoint: String?
    public var revocationEndpoint: String?
    public var codeChallengeMethodsSupported: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case deviceAuthorizationEndpoint = "device_authorization_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
    }

    /// The metadata URLs to try for `issuer`, in order: OpenID Connect's (the issuer plus
    /// `/.well-known/openid-configuration`), then RFC 8414's (`/.well-known/
    /// oauth-authorization-server` between the host and the issuer's path). Empty for an
    /// issuer that is not an http(s) URL without query and fragment (RFC 8414 §2).
    public static func wellKnownURLs(forIssuer issuer: String) -> [String] {
        guard let url = URLComponents(string: issuer), let scheme = url.scheme?.lowercased(),
              scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty,
              url.query == nil, url.fragment == nil, url.user == nil
        else { return [] }
        // The path is the issuer's last characters: ASCII, as percent-encoding keeps it.
        let origin = issuer.dropLast(url.percentEncodedPath.count)
        let path = withoutTrailingSlash(url.percentEncodedPath)
        return [
            origin + path + "/.well-known/openid-configuration",
            origin + "/.well-known/oauth-authorization-server" + path,
        ]
    }

    /// Reads a metadata answer and checks that it is about `issuer` (RFC 8414 §3.3, OIDC
    /// Discovery §4.3: it must be identical, so that one server cannot speak for another).
    /// A trailing `/` is the only difference tolerated: configurations often add or drop
    /// it, and it does not name another server.
    public static func parse(_ response: AuthHTTPResponse, issuer: String, now: Date) throws(TokenEndpointError) -> DiscoveryDocument {
        let document = try OAuthResponse.decode(DiscoveryDocument.self, from: response, now: now)
        guard withoutTrailingSlash(document.issuer) == withoutTrailingSlash(issuer) else {
            throw .issuerMismatch(expected: issuer, found: document.issuer)
        }
        return document
    }

    private static func withoutTrailingSlash(_ text: String) -> Substring {
        text.hasSuffix("/") ? text.dropLast() : Substring(text)
    }
}
