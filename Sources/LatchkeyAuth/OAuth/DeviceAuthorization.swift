#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyUpstream

/// The start of the device flow (RFC 8628 §3.1): asks for a device code and a user code.
public struct DeviceAuthorizationRequest: Sendable {
    public var endpoint: String
    public var clientAuthentication: ClientAuthentication
    /// Space-separated scopes.
    public var scope: String?
    public var extraFields: [(String, String)]

    public init(
        endpoint: String, clientAuthentication: ClientAuthentication, scope: String? = nil,
        extraFields: [(String, String)] = []
    ) {
        self.endpoint = endpoint
        self.clientAuthentication = clientAuthentication
        self.scope = scope
        self.extraFields = extraFields
    }

    public func httpRequest(options: UpstreamOptions) throws(TokenEndpointError) -> AuthHTTPRequest {
        var form: [(String, String)] = []
        if let scope { form.append(("scope", scope)) }
        form += extraFields
        return try OAuthFormPost.request(to: endpoint, form: form, clientAuthentication: clientAuthentication, options: options)
    }
}

/// The device authorization response (RFC 8628 §3.2): what to show the user, and how to
/// poll the token endpoint with `TokenGrant.deviceCode`.
public struct DeviceAuthorization: Sendable, Equatable {
    public var deviceCode: String
    public var userCode: String
    /// Where the user enters `userCode`.
    public var verificationURI: String
    /// The same page with the code filled in, when the server offers it.
    public var verificationURIComplete: String?
    public var expiresIn: Duration
    /// The wait between polls: the server's `interval`, else 5 seconds (RFC 8628 §3.2).
    public var interval: Duration

    public static let defaultInterval = Duration.seconds(5)

    public static func parse(_ response: AuthHTTPResponse, now: Date) throws(TokenEndpointError) -> DeviceAuthorization {
        try OAuthResponse.decode(Body.self, from: response, now: now).authorization
    }

    private struct Body: Decodable {
        var authorization: DeviceAuthorization

        enum CodingKeys: String, CodingKey {
            case deviceCode = "device_code"
            case userCode = "user_code"
            case verificationURI = "verification_uri"
            /// Google's spelling, from a draft of RFC 8628.
            case verificationURL = "verification_url"
            case verificationURIComplete = "verification_uri_complete"
            case expiresIn = "expires_in"
            case interval
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let verificationURI = try container.decodeIfPresent(String.self, forKey: .verificationURI)
                ?? container.decodeIfPresent(String.self, forKey: .verificationURL)
                ?? container.decode(String.self, forKey: .verificationURI)
            guard let expiresIn = try container.decode(LenientSeconds.self, forKey: .expiresIn).duration else {
                throw DecodingError.dataCorruptedError(forKey: .expiresIn, in: container, debugDescription: "not positive")
            }
            authorization = DeviceAuthorization(
                deviceCode: try container.decode(String.self, forKey: .deviceCode),
                userCode: try container.decode(String.self, forKey: .userCode),
                verificationURI: verificationURI,
                verificationURIComplete: try? container.decodeIfPresent(String.self, forKey: .verificationURIComplete),
                expiresIn: expiresIn,
                interval: (try? container.decodeIfPresent(LenientSeconds.self, forKey: .interval))?.duration
                    ?? DeviceAuthorization.defaultInterval
            )
        }
    }
}
