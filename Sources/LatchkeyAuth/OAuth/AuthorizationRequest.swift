/// The front-channel half of the authorization code flow (RFC 6749 §4.1.1) with PKCE
/// S256 (RFC 7636 §4.3): the URL the user's browser opens.
public struct AuthorizationRequest: Sendable {
    public var authorizationEndpoint: String
    public var clientID: String
    /// A loopback redirect (RFC 8252 §7.3) for the CLI.
    public var redirectURI: String
    /// Space-separated scopes.
    public var scope: String?
    /// Unguessable, one per attempt: binds the redirect to this attempt (RFC 6749 §10.12).
    public var state: String
    /// BASE64URL(SHA256(code_verifier)).
    public var codeChallenge: String
    /// Provider-specific parameters (`prompt`, `access_type`, `audience`, …), sent last.
    public var extraParameters: [(String, String)]

    public init(
        authorizationEndpoint: String, clientID: String, redirectURI: String, scope: String? = nil,
        state: String, codeChallenge: String, extraParameters: [(String, String)] = []
    ) {
        self.authorizationEndpoint = authorizationEndpoint
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = state
        self.codeChallenge = codeChallenge
        self.extraParameters = extraParameters
    }

    /// The endpoint with the request's parameters added to its query (RFC 6749 §3.1: an
    /// endpoint may have a query of its own, which is kept).
    public var url: String {
        var parameters = [("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI)]
        if let scope { parameters.append(("scope", scope)) }
        parameters += [("state", state), ("code_challenge", codeChallenge), ("code_challenge_method", PKCE.challengeMethod)]
        parameters += extraParameters
        return FormEncoding.appending(parameters, toQueryOf: authorizationEndpoint)
    }

    /// The code from the redirect back to `redirectURI` (a request target such as
    /// `/callback?code=…&state=…`, or a whole URL), once its `state` matches this request's
    /// (RFC 6749 §4.1.2, §10.12). The state is checked first, for errors too: a redirect
    /// that does not belong to this attempt says nothing about it.
    public func code(fromRedirect redirect: String) throws(AuthorizationError) -> String {
        var query = Substring(redirect)
        query = query[..<(query.firstIndex(of: "#") ?? query.endIndex)]
        query = query.firstIndex(of: "?").map { query[query.index(after: $0)...] } ?? ""
        let parameters = FormEncoding.decode(query)
        func value(_ name: String) -> String? { parameters.first { $0.0 == name }?.1 }

        guard let returnedState = value("state"), constantTimeEquals(returnedState, state) else {
            throw .stateMismatch
        }
        if let error = value("error") {
            throw .refused(error: OAuthError.oneLine(error), description: value("error_description").map(OAuthError.oneLine))
        }
        guard let code = value("code"), !code.isEmpty else { throw .missingCode }
        return code
    }
}

/// Why a redirect brought no authorization code. The messages never quote the code or
/// the state.
public enum AuthorizationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No `state`, or not the one sent: another attempt's redirect, or a forged one.
    case stateMismatch
    /// The server refused (RFC 6749 §4.1.2.1), e.g. `access_denied` when the user said no.
    case refused(error: String, description: String?)
    /// Neither a code nor an error.
    case missingCode

    public var message: String {
        switch self {
        case .stateMismatch:
            "the redirect's state does not match this login attempt; start the login again"
        case .refused(let error, let description):
            "the authorization server refused the login with \(error)" + (description.map { ": " + $0 } ?? "")
        case .missingCode:
            "the redirect carries neither an authorization code nor an error"
        }
    }

    public var description: String { message }
}
