/// An entry under `identities:` as written.
struct RawIdentity: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case grant, grant_type, params, token_url, client_id, client_secret, client_auth
        case username, password, refresh_token, token, scope, audience, resource
        case acquire, keep_warm, clock_skew, refresh_ahead
        case key_file, service_account_file, assertion_issuer, subject, assertion_audience, key_id
        case subject_token_file, subject_token_type, requested_token_type
        case client_key_file, client_key_id, hook, issuer
        case authorization_url, redirect_port, redirect_path, device_authorization_url, revocation_url
        case check_on_start, userinfo_url, introspection_url
    }

    var grant: String?
    var grantType: String?
    var params: LenientMap<RawParameterValue>?
    /// The token endpoint: a URL, or the long form with TLS, proxy and timeout settings.
    var tokenURL: RawUpstream?
    var clientID: String?
    var clientSecret: RawSecret?
    var clientAuth: String?
    var username: String?
    var password: RawSecret?
    var refreshToken: RawSecret?
    var token: RawSecret?
    var scope: String?
    var audience: String?
    var resource: LenientList<String>?
    var acquire: String?
    var keepWarm: Bool?
    var clockSkew: RawDuration?
    var refreshAhead: RawDuration?
    var keyFile: String?
    var serviceAccountFile: String?
    var assertionIssuer: String?
    var subject: String?
    var assertionAudience: String?
    var keyID: String?
    var subjectTokenFile: String?
    var subjectTokenType: String?
    var requestedTokenType: String?
    var clientKeyFile: String?
    var clientKeyID: String?
    var hook: LenientList<String>?
    /// The IdP's issuer URL, whose discovery document names the endpoints (RFC 8414 / OIDC).
    var issuer: RawUpstream?
    var authorizationURL: String?
    var redirectPort: Int?
    var redirectPath: String?
    var deviceAuthorizationURL: String?
    /// Where `latchkey logout` revokes the tokens (RFC 7009), when discovery does not say.
    var revocationURL: String?
    var checkOnStart: String?
    var userinfoURL: String?
    var introspectionURL: String?
    /// The keys the document gave, to report those the chosen grant does not use.
    var present: Set<CodingKeys>

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with grant and token_url")
        grant = f(.grant)
        grantType = f(.grant_type)
        params = f(.params)
        tokenURL = f(.token_url)
        clientID = f(.client_id)
        clientSecret = f(.client_secret)
        clientAuth = f(.client_auth)
        username = f(.username)
        password = f(.password)
        refreshToken = f(.refresh_token)
        token = f(.token)
        scope = f(.scope)
        audience = f(.audience)
        resource = f(.resource)
        acquire = f(.acquire)
        keepWarm = f(.keep_warm)
        clockSkew = f(.clock_skew)
        refreshAhead = f(.refresh_ahead)
        keyFile = f(.key_file)
        serviceAccountFile = f(.service_account_file)
        assertionIssuer = f(.assertion_issuer)
        subject = f(.subject)
        assertionAudience = f(.assertion_audience)
        keyID = f(.key_id)
        subjectTokenFile = f(.subject_token_file)
        subjectTokenType = f(.subject_token_type)
        requestedTokenType = f(.requested_token_type)
        clientKeyFile = f(.client_key_file)
        clientKeyID = f(.client_key_id)
        hook = f(.hook)
        issuer = f(.issuer)
        authorizationURL = f(.authorization_url)
        redirectPort = f(.redirect_port)
        redirectPath = f(.redirect_path)
        deviceAuthorizationURL = f(.device_authorization_url)
        revocationURL = f(.revocation_url)
        checkOnStart = f(.check_on_start)
        userinfoURL = f(.userinfo_url)
        introspectionURL = f(.introspection_url)
        present = Set(CodingKeys.allCases.filter(f.contains))
    }
}

/// A custom grant's form field: a plain string, or a secret mapping.
enum RawParameterValue: Decodable {
    case literal(String)
    case secret(RawSecret)

    init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            self = .literal(text)
        } else {
            self = .secret(try RawSecret(from: decoder))
        }
    }
}
