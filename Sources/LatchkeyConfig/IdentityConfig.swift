import LatchkeyUpstream

/// An identity: how Latchkey obtains and renews one credential by itself.
public struct IdentityConfig: Sendable, Equatable {
    public enum Grant: Sendable, Equatable {
        /// A token stored by hand (Kii's manual login): never refreshed.
        case staticToken(SecretSource)
        /// Resource-owner password (Podio user login, Auth0 resource-owner password).
        case password(username: String, password: SecretSource)
        case clientCredentials
        /// Starts from a refresh token the user obtained elsewhere.
        case refreshToken(SecretSource)
        /// Any other grant_type with its own form fields (Podio's `app`).
        case custom(grantType: String, parameters: [GrantParameter])
        /// RFC 7523: a JWT signed with the identity's own key is the grant.
        case jwtBearer(JWTBearer)
        /// RFC 8693: a token read from a file (a Kubernetes projected token, rotated by the
        /// kubelet) is traded for one for the upstream.
        case tokenExchange(subjectTokenFile: String, subjectTokenType: String, requestedTokenType: String?)
        /// RFC 6749 §4.1 with PKCE (RFC 7636): a person logs in in a browser with `latchkey
        /// login`, which receives the redirect on a loopback port (RFC 8252); from then on
        /// the refresh token renews the identity.
        case authorizationCode(AuthorizationCodeLogin)
        /// RFC 8628: a person approves `latchkey login` on another device by entering a
        /// code; from then on the refresh token renews the identity. The endpoint is nil
        /// when the issuer's metadata names it.
        case deviceCode(deviceAuthorizationURL: String?)
        /// A credential made by a list of HTTP steps (TheMovieDB's session): see `Recipe`.
        case recipe(Recipe)
    }

    /// Where the browser goes and where it comes back to, for the authorization code grant.
    public struct AuthorizationCodeLogin: Sendable, Equatable {
        /// The authorization endpoint; nil when the issuer's metadata names it.
        public var authorizationURL: String?
        /// 0: any free port, which RFC 8252 §7.3 requires the IdP to accept for a loopback
        /// IP redirect; a fixed one for IdPs that register the exact URI.
        public var redirectPort: UInt16
        public var redirectPath: String

        public static let defaultRedirectPath = "/callback"

        public init(authorizationURL: String? = nil, redirectPort: UInt16 = 0, redirectPath: String = Self.defaultRedirectPath) {
            self.authorizationURL = authorizationURL
            self.redirectPort = redirectPort
            self.redirectPath = redirectPath
        }
    }

    public struct JWTBearer: Sendable, Equatable {
        public enum Key: Sendable, Equatable {
            /// A PEM private key (RSA for RS256, P-256 for ES256).
            case pemFile(String)
            /// A Google-style service-account key: key, email and token endpoint in one.
            case serviceAccountFile(String)
        }

        public var key: Key
        /// `iss`; default the service account's email, else the client id.
        public var issuer: String?
        public var subject: String?
        /// `aud`; default the token endpoint.
        public var audience: String?
        public var keyID: String?

        public init(key: Key, issuer: String? = nil, subject: String? = nil, audience: String? = nil, keyID: String? = nil) {
            self.key = key
            self.issuer = issuer
            self.subject = subject
            self.audience = audience
            self.keyID = keyID
        }
    }

    /// How the client authenticates to the token endpoint (RFC 6749 §2.3, OIDC Core §9).
    public enum ClientAuthMethod: String, Sendable, Equatable, CaseIterable {
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
        case privateKeyJWT = "private_key_jwt"
        case none
    }

    public struct GrantParameter: Sendable, Equatable {
        public enum Value: Sendable, Equatable {
            case literal(String)
            case secret(SecretSource)
        }

        public var name: String
        public var value: Value
    }

    public var name: String
    public var grant: Grant
    /// The token endpoint; nil for static tokens, for service-account keys (which name
    /// theirs) and when `issuer` is given.
    public var tokenURL: String?
    /// Discover the endpoints from this issuer's metadata (RFC 8414 / OpenID Connect).
    public var issuer: String?
    /// The revocation endpoint (RFC 7009) `latchkey logout` calls; without it, the
    /// issuer's metadata may name one.
    public var revocationURL: String?
    /// TLS, proxy and timeouts for every request to the IdP.
    public var idpOptions: UpstreamOptions
    public var clientID: String?
    public var clientAuth: ClientAuthMethod
    public var clientSecret: SecretSource?
    /// The PEM key `private_key_jwt` signs its client assertions with, and its `kid`.
    public var clientKeyFile: String?
    public var clientKeyID: String?
    public var scope: String?
    public var audience: String?
    public var resources: [String]
    /// Acquire at start rather than on the first request that needs the identity.
    public var acquireEagerly: Bool
    /// Refresh in the background even while no request uses the identity (`keep_warm`);
    /// otherwise an identity unused for a token lifetime stops refreshing.
    public var keepWarm: Bool
    public var timing: TokenTiming
    /// A command run on each auth-state change, with the identity and the event in its
    /// environment (never a token, and nothing secret in its arguments).
    public var hook: [String]
    /// How a token restored from the store is checked with the IdP before its first use.
    public var startupCheck: StartupCheck?

    /// The IdP endpoint that says whether it still accepts a token (as Auth0's SDKs ask
    /// at start); nil takes it from the issuer's metadata.
    public enum StartupCheck: Sendable, Equatable {
        /// OIDC userinfo, asked with the token itself (Auth0).
        case userinfo(url: String?)
        /// RFC 7662 introspection, asked with the client's authentication.
        case introspection(url: String?)
    }

    public init(
        name: String, grant: Grant, tokenURL: String? = nil, idpOptions: UpstreamOptions = .init(),
        clientID: String? = nil, clientAuth: ClientAuthMethod = .none, clientSecret: SecretSource? = nil,
        scope: String? = nil, audience: String? = nil, resources: [String] = [],
        acquireEagerly: Bool = false, timing: TokenTiming = .init()
    ) {
        self.name = name
        self.grant = grant
        self.tokenURL = tokenURL
        self.issuer = nil
        self.revocationURL = nil
        self.idpOptions = idpOptions
        self.clientID = clientID
        self.clientAuth = clientAuth
        self.clientSecret = clientSecret
        self.scope = scope
        self.audience = audience
        self.resources = resources
        self.acquireEagerly = acquireEagerly
        self.keepWarm = false
        self.timing = timing
        self.hook = []
        self.startupCheck = nil
    }

    /// The grants a `grant:` key may name.
    static let grantNames = [
        "static", "password", "client_credentials", "refresh_token", "custom", "jwt_bearer", "token_exchange",
        "authorization_code", "device_code", "recipe",
    ]

    /// Whether only a person can get this identity's first token, with `latchkey login`.
    public var logsInInteractively: Bool {
        switch grant {
        case .authorizationCode, .deviceCode: true
        case .recipe(let recipe): !recipe.prompts.isEmpty
        default: false
        }
    }
}

extension IdentityConfig.Grant {
    /// The `grant:` value that configures it.
    public var name: String {
        switch self {
        case .staticToken: "static"
        case .password: "password"
        case .clientCredentials: "client_credentials"
        case .refreshToken: "refresh_token"
        case .custom: "custom"
        case .jwtBearer: "jwt_bearer"
        case .tokenExchange: "token_exchange"
        case .authorizationCode: "authorization_code"
        case .deviceCode: "device_code"
        case .recipe: "recipe"
        }
    }
}

extension IdentityConfig {
    /// Where each secret of this identity is held in the `CredentialStore`: re-read like
    /// any credential file, and masked in logs like any credential.
    public static func secretName(identity: String, _ field: String) -> String {
        "identity:\(identity):\(field)"
    }

    /// Where one of this identity's keys is, named as the configuration's own messages name
    /// it: `identities.podio.client_secret`.
    public func configPath(_ key: String) -> String {
        (ConfigPath.root / "identities" / name / key).description
    }

    /// Every secret this identity needs, named by `secretName`.
    public var secretEntries: [SecretEntry] {
        let path = "identities.\(name)"
        var entries: [SecretEntry] = []
        func add(_ field: String, _ source: SecretSource?, at key: String) {
            guard let source else { return }
            entries.append(SecretEntry(name: Self.secretName(identity: name, field), source: source, configPath: "\(path).\(key)"))
        }
        add("client_secret", clientSecret, at: "client_secret")
        switch grant {
        case .staticToken(let source): add("token", source, at: "token")
        case .password(_, let password): add("password", password, at: "password")
        case .refreshToken(let source): add("refresh_token", source, at: "refresh_token")
        case .custom(_, let parameters):
            for parameter in parameters {
                if case .secret(let source) = parameter.value { add("param:" + parameter.name, source, at: "params.\(parameter.name)") }
            }
        case .recipe(let recipe):
            for secret in recipe.secrets { add("secret:" + secret.name, secret.source, at: "secrets.\(secret.name)") }
            for credential in recipe.credentials {
                entries.append(SecretEntry(name: Self.secretName(identity: name, "credential:" + credential.name), source: credential.source,
                                           configPath: "credentials.\(credential.name)"))
            }
        case .clientCredentials, .jwtBearer, .tokenExchange, .authorizationCode, .deviceCode: break
        }
        return entries
    }
}
