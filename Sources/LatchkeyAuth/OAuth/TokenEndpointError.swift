/// Why a call to an OAuth endpoint (token, device authorization, revocation, discovery,
/// userinfo) gave no usable answer. `message` is one line for people and logs: it names
/// statuses, media types and error codes, and never holds a token, secret, password,
/// assertion or any of the response body beyond the server's OAuth error text (from which
/// the endpoint calls of `OAuthCalls.swift` remove the request's secrets).
public enum TokenEndpointError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with an OAuth error.
    case oauth(OAuthError)
    /// No complete answer: refused, unresolvable, TLS, timeout, cut, cancelled, shut down.
    case transport(AuthHTTPError)
    /// An answer that is not an OAuth response, such as a proxy's HTML 502 page or a bare
    /// 429. The body is not kept: it may reflect the request.
    case unexpectedStatus(status: Int, mediaType: String?, retryAfter: Duration?)
    /// A success status whose body is not what the endpoint must return.
    case invalidResponse(status: Int, reason: String)
    /// The answer is larger than the request's `maxResponseBytes`.
    case responseTooLarge(limit: Int)
    /// Discovery: the issuer is not an http(s) URL without query and fragment, so it has
    /// no well-known URLs (RFC 8414 §2).
    case invalidIssuer(String)
    /// Discovery: the document is about another issuer (RFC 8414 §3.3).
    case issuerMismatch(expected: String, found: String)
    /// `private_key_jwt`: the assertion could not be made; the signer's own words.
    case clientAssertionFailed(String)

    public var status: Int? {
        switch self {
        case .oauth(let error): error.status
        case .unexpectedStatus(let status, _, _), .invalidResponse(let status, _): status
        case .transport, .responseTooLarge, .invalidIssuer, .issuerMismatch, .clientAssertionFailed: nil
        }
    }

    /// How long the server asked to wait before the next attempt (`Retry-After`).
    public var retryAfter: Duration? {
        switch self {
        case .oauth(let error): error.retryAfter
        case .unexpectedStatus(_, _, let retryAfter): retryAfter
        default: nil
        }
    }

    /// The registered OAuth error code, if the server answered with one.
    public var oauthCode: OAuthError.Code? {
        if case .oauth(let error) = self { error.code } else { nil }
    }

    /// The grant is dead (RFC 6749 §5.2): re-authenticate instead of retrying.
    public var isInvalidGrant: Bool { oauthCode == .invalidGrant }

    /// Whether the same request may succeed later: the server was unreachable, slow,
    /// overloaded (5xx, 429, 408) or said it is temporarily unavailable. OAuth errors
    /// about the request, the client or the grant are final, as are cancellation and
    /// shutdown.
    public var isRetryable: Bool {
        switch self {
        case .oauth(let error):
            Self.isTransient(status: error.status)
                || error.code == .serverError || error.code == .temporarilyUnavailable
        case .transport(let error):
            error.code != .cancelled && error.code != .shutdown && error.code != .responseTooLarge
        case .unexpectedStatus(let status, _, _):
            Self.isTransient(status: status)
        case .invalidResponse, .responseTooLarge, .invalidIssuer, .issuerMismatch, .clientAssertionFailed:
            false
        }
    }

    public var message: String {
        switch self {
        case .oauth(let error):
            let description = error.errorDescription.map { ": " + $0 } ?? ""
            return "the authorization server refused the request with \(error.error) (HTTP \(error.status))\(description)"
                + Self.retryNote(error.retryAfter)
        case .transport(let error):
            return "cannot get an answer from the authorization server: \(error)"
        case .unexpectedStatus(let status, let mediaType, let retryAfter):
            return "the authorization server answered HTTP \(status) with \(mediaType ?? "no content type"), not an OAuth response"
                + Self.retryNote(retryAfter)
        case .invalidResponse(let status, let reason):
            return "the authorization server answered HTTP \(status) but \(reason)"
        case .responseTooLarge(let limit):
            return "the authorization server's answer is larger than the limit of \(limit) bytes"
        case .invalidIssuer(let issuer):
            return "the issuer \(issuer) is not an http(s) URL without query and fragment"
        case .issuerMismatch(let expected, let found):
            return "the discovery document is for issuer \(found), not the configured \(expected)"
        case .clientAssertionFailed(let reason):
            return "cannot make the private_key_jwt client assertion: \(reason)"
        }
    }

    public var description: String { message }

    private static func isTransient(status: Int) -> Bool {
        status >= 500 || status == 429 || status == 408
    }

    private static func retryNote(_ retryAfter: Duration?) -> String {
        retryAfter.map { "; it asks to retry after \($0)" } ?? ""
    }
}
