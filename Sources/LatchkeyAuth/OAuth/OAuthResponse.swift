#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads an OAuth endpoint's answer the same way for every endpoint: JSON on success, an
/// OAuth error body (or just a status) otherwise.
enum OAuthResponse {
    /// Decodes a success answer's JSON body as `T`. A failure status becomes `failure`;
    /// a success whose body is an OAuth error (GitHub answers 200 with one) becomes that
    /// error; any other body is `.invalidResponse`, named by what was wrong, not by its
    /// content.
    static func decode<T: Decodable>(_ type: T.Type, from response: AuthHTTPResponse, now: Date) throws(TokenEndpointError) -> T {
        guard response.isSuccess else { throw failure(response, now: now) }
        do {
            return try JSONDecoder().decode(T.self, from: Data(response.body))
        } catch {
            if let oauth = oauthError(in: response, now: now) { throw .oauth(oauth) }
            throw .invalidResponse(status: response.status, reason: reason(error, mediaType: response.mediaType))
        }
    }

    /// The error a non-success answer stands for: the OAuth error in its body, else its
    /// status and media type alone.
    static func failure(_ response: AuthHTTPResponse, now: Date) -> TokenEndpointError {
        if let oauth = oauthError(in: response, now: now) { return .oauth(oauth) }
        return .unexpectedStatus(
            status: response.status, mediaType: response.mediaType,
            retryAfter: RetryAfter.parse(response.fields["Retry-After"], now: now)
        )
    }

    private static func oauthError(in response: AuthHTTPResponse, now: Date) -> OAuthError? {
        guard let body = try? JSONDecoder().decode(ErrorBody.self, from: Data(response.body)) else { return nil }
        return OAuthError(
            error: body.error, errorDescription: body.errorDescription, errorURI: body.errorURI,
            status: response.status, retryAfter: RetryAfter.parse(response.fields["Retry-After"], now: now)
        )
    }

    /// RFC 6749 §5.2. Only a string `error` makes a body an OAuth error (Facebook-style
    /// `{"error": {...}}` objects are not).
    private struct ErrorBody: Decodable {
        var error: String
        var errorDescription: String?
        var errorURI: String?

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
            case errorURI = "error_uri"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            error = try container.decode(String.self, forKey: .error)
            errorDescription = try? container.decodeIfPresent(String.self, forKey: .errorDescription)
            errorURI = try? container.decodeIfPresent(String.self, forKey: .errorURI)
        }
    }

    /// What was wrong with a body, by field name only: values may be secrets.
    private static func reason(_ error: any Error, mediaType: String?) -> String {
        let notAnObject = "its body is not a JSON object (\(mediaType ?? "no content type"))"
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?:
            return "its JSON has no \(path(context.codingPath + [key]))"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            return context.codingPath.isEmpty ? notAnObject : "its JSON has an unusable \(path(context.codingPath))"
        default:
            return notAnObject
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map(\.stringValue).joined(separator: ".")
    }
}
