/// What a token request trades for tokens: the grant types of RFC 6749 and its
/// extensions, as the form fields each puts in the request body.
public enum TokenGrant: Sendable {
    /// RFC 6749 §4.3: the resource owner's password.
    case password(username: String, password: String)
    /// RFC 6749 §4.4.
    case clientCredentials
    /// RFC 6749 §6.
    case refreshToken(String)
    /// Any other `grant_type` with its own fields, e.g. Podio's `app` with `app_id` and
    /// `app_token`.
    case custom(grantType: String, fields: [(String, String)])
    /// RFC 6749 §4.1.3 with the PKCE verifier (RFC 7636 §4.5).
    case authorizationCode(code: String, redirectURI: String, codeVerifier: String)
    /// RFC 8628 §3.4: polling with the device code.
    case deviceCode(String)
    /// RFC 7523 §2.1: a signed JWT as the grant, e.g. a service-account key.
    case jwtBearer(assertion: String)
    /// RFC 8693 §2.1.
    case tokenExchange(
        subjectToken: String, subjectTokenType: String,
        requestedTokenType: String? = nil, actorToken: String? = nil, actorTokenType: String? = nil
    )

    /// The `grant_type` value, for logs and events.
    public var grantType: String {
        switch self {
        case .password: "password"
        case .clientCredentials: "client_credentials"
        case .refreshToken: "refresh_token"
        case .custom(let grantType, _): grantType
        case .authorizationCode: "authorization_code"
        case .deviceCode: "urn:ietf:params:oauth:grant-type:device_code"
        case .jwtBearer: "urn:ietf:params:oauth:grant-type:jwt-bearer"
        case .tokenExchange: "urn:ietf:params:oauth:grant-type:token-exchange"
        }
    }

    /// `grant_type` first, then the grant's own fields in the order the RFCs show them.
    var formFields: [(String, String)] {
        var form = [("grant_type", grantType)]
        switch self {
        case .password(let username, let password):
            form += [("username", username), ("password", password)]
        case .clientCredentials:
            break
        case .refreshToken(let token):
            form.append(("refresh_token", token))
        case .custom(_, let fields):
            form += fields
        case .authorizationCode(let code, let redirectURI, let verifier):
            form += [("code", code), ("redirect_uri", redirectURI), ("code_verifier", verifier)]
        case .deviceCode(let code):
            form.append(("device_code", code))
        case .jwtBearer(let assertion):
            form.append(("assertion", assertion))
        case .tokenExchange(let subject, let subjectType, let requestedType, let actor, let actorType):
            form += [("subject_token", subject), ("subject_token_type", subjectType)]
            if let requestedType { form.append(("requested_token_type", requestedType)) }
            if let actor { form.append(("actor_token", actor)) }
            if let actorType { form.append(("actor_token_type", actorType)) }
        }
        return form
    }
}
