#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig
import Synchronization

/// An identity's token endpoint and grant. Secrets are read from the credential store at
/// each request, so a rotated client secret or password file is used from then on.
public final class OAuthTokenSource: TokenSource {
    let config: IdentityConfig
    let credentials: CredentialStore
    let client: AuthHTTPClient
    /// The metadata of `config.issuer`, once fetched.
    private let discovered = Mutex<DiscoveryDocument?>(nil)

    public init(config: IdentityConfig, credentials: CredentialStore, client: AuthHTTPClient) {
        self.config = config
        self.credentials = credentials
        self.client = client
    }

    /// Every grant here can run again without a person, except a seeded refresh token and
    /// the grants of `latchkey login`: those renew with their refresh token only.
    public var canGrant: Bool { config.grantsByItself }

    public var renewable: Bool { true }

    /// For a refresh-token identity, the token it starts from: no access token yet, the
    /// configured refresh token to get one.
    public static func seed(_ config: IdentityConfig, credentials: CredentialStore) -> TokenSet? {
        guard case .refreshToken = config.grant,
              let refreshToken = credentials[IdentityConfig.secretName(identity: config.name, "refresh_token")]
        else { return nil }
        return TokenSet(accessToken: "", refreshToken: refreshToken, expiresAt: .distantPast, obtainedAt: .distantPast)
    }

    public func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
        let secrets = credentials.snapshot
        let discovered = try await discoveredTokenEndpoint(now: now)
        let request = try tokenRequest(kind, refreshToken: refreshToken, secrets: secrets, endpoint: discovered, now: now)
        do {
            return try await requestToken(request, client: client, options: config.idpOptions, now: now)
        } catch {
            throw config.acquisitionFailure(error)
        }
    }

    /// The token endpoint from the issuer's metadata; nil when the identity names its
    /// endpoint itself.
    func discoveredTokenEndpoint(now: Date) async throws(AcquisitionFailure) -> String? {
        guard config.tokenURL == nil, config.issuer != nil else { return nil }
        return try await discoveredEndpoint(\.tokenEndpoint, named: "token_endpoint", now: now)
    }

    /// An endpoint from the issuer's metadata.
    func discoveredEndpoint(
        _ endpoint: KeyPath<DiscoveryDocument, String?>, named name: String, now: Date
    ) async throws(AcquisitionFailure) -> String {
        guard let issuer = config.issuer else {
            throw AcquisitionFailure(.rejected, "identity \(config.name) has no \(name) and no issuer to discover it")
        }
        guard let url = try await discoveryDocument(issuer: issuer, now: now)[keyPath: endpoint] else {
            throw AcquisitionFailure(.transient, "the metadata of \(issuer) names no \(name)")
        }
        return url
    }

    /// The issuer's metadata, fetched once and kept.
    func discoveryDocument(issuer: String, now: Date) async throws(AcquisitionFailure) -> DiscoveryDocument {
        if let document = discovered.withLock({ $0 }) { return document }
        let document: DiscoveryDocument
        do {
            document = try await fetchDiscoveryDocument(issuer: issuer, client: client, options: config.idpOptions, now: now)
        } catch {
            throw AcquisitionFailure(.transient, "cannot discover the endpoints of \(issuer): \(error.message)", retryAfter: error.retryAfter)
        }
        discovered.withLock { $0 = document }
        return document
    }

    private func tokenRequest(
        _ kind: AcquisitionKind, refreshToken: String?, secrets: CredentialSnapshot, endpoint discovered: String?, now: Date
    ) throws(AcquisitionFailure) -> TokenRequest {
        func secret(_ field: String) throws(AcquisitionFailure) -> String {
            try self.secret(field, in: secrets)
        }
        // A service-account key names its own token endpoint.
        var endpoint = config.tokenURL ?? discovered
        let grant: TokenGrant
        switch (kind, config.grant) {
        case (.refresh, _):
            guard let refreshToken else { throw AcquisitionFailure(.rejected, "there is no refresh token") }
            grant = .refreshToken(refreshToken)
        case (.grant, .password(let username, _)):
            grant = .password(username: username, password: try secret("password"))
        case (.grant, .clientCredentials):
            grant = .clientCredentials
        case (.grant, .refreshToken):
            // The seed went in as the first token's refresh token (`seed`); once it is
            // refused only a person can help.
            throw AcquisitionFailure(.rejected, "the refresh token was refused and the identity has nothing else to log in with")
        case (.grant, .custom(let grantType, let parameters)):
            var fields: [(String, String)] = []
            for parameter in parameters {
                switch parameter.value {
                case .literal(let text): fields.append((parameter.name, text))
                case .secret: fields.append((parameter.name, try secret("param:" + parameter.name)))
                }
            }
            grant = .custom(grantType: grantType, fields: fields)
        case (.grant, .jwtBearer(let bearer)):
            let assertion = try signedAssertion(bearer, endpoint: &endpoint, now: now)
            grant = .jwtBearer(assertion: assertion)
        case (.grant, .tokenExchange(let file, let tokenType, let requestedType)):
            // Re-read each time: the kubelet rotates projected tokens in place.
            let subjectToken: String
            do {
                subjectToken = try SecretResolver.resolve(.file(file), environment: [:])
            } catch {
                throw AcquisitionFailure(.transient, "cannot read the subject token: \(error.message)")
            }
            grant = .tokenExchange(subjectToken: subjectToken, subjectTokenType: tokenType, requestedTokenType: requestedType)
        case (.grant, .authorizationCode), (.grant, .deviceCode):
            throw AcquisitionFailure(.rejected, "the identity logs in with a person, by `latchkey login \(config.name)`")
        case (.grant, .staticToken):
            throw AcquisitionFailure(.rejected, "a static token has no token endpoint")
        case (.grant, .recipe):
            throw AcquisitionFailure(.rejected, "a recipe has no token endpoint; its steps make its credential")
        }
        guard let endpoint else { throw AcquisitionFailure(.rejected, "identity \(config.name) has no token endpoint") }
        return TokenRequest(endpoint: endpoint, grant: grant,
                            clientAuthentication: try clientAuthentication(endpoint: endpoint, secrets: secrets),
                            scope: config.scope, audience: config.audience, resources: config.resources)
    }

    func secret(_ field: String, in secrets: CredentialSnapshot) throws(AcquisitionFailure) -> String {
        guard let value = secrets[IdentityConfig.secretName(identity: config.name, field)] else {
            throw AcquisitionFailure(.transient, "the \(field) of identity \(config.name) has no value")
        }
        return value
    }

    /// How the client proves itself at `endpoint` (whose URL a `private_key_jwt` assertion
    /// names as its audience).
    func clientAuthentication(endpoint: String, secrets: CredentialSnapshot) throws(AcquisitionFailure) -> ClientAuthentication? {
        let id = config.clientID ?? ""
        switch config.clientAuth {
        case .clientSecretBasic: return .clientSecretBasic(id: id, secret: try secret("client_secret", in: secrets))
        case .clientSecretPost: return .clientSecretPost(id: id, secret: try secret("client_secret", in: secrets))
        case .none: return config.clientID.map { .none(id: $0) }
        case .privateKeyJWT:
            let key = try loadKey { () throws(CryptoError) in try SigningKey(pemFile: config.clientKeyFile ?? "") }
            let keyID = config.clientKeyID
            return .privateKeyJWT(id: id) {
                try JWTAssertion.clientAuthentication(clientID: id, tokenEndpoint: endpoint, key: key, keyID: keyID, now: Date())
            }
        }
    }

    /// The RFC 7523 grant assertion. Keys are read at each token request, so a rotated key
    /// file is picked up without a restart.
    private func signedAssertion(_ bearer: IdentityConfig.JWTBearer, endpoint: inout String?, now: Date) throws(AcquisitionFailure) -> String {
        let key: SigningKey
        var issuer = bearer.issuer ?? config.clientID
        var keyID = bearer.keyID
        switch bearer.key {
        case .pemFile(let path):
            key = try loadKey { () throws(CryptoError) in try SigningKey(pemFile: path) }
        case .serviceAccountFile(let path):
            let account = try loadKey { () throws(CryptoError) in try ServiceAccountKey(contentsOfFile: path) }
            key = account.signingKey
            issuer = bearer.issuer ?? account.clientEmail
            keyID = keyID ?? account.privateKeyID
            endpoint = endpoint ?? account.tokenURI
        }
        guard let issuer, let audience = bearer.audience ?? endpoint else {
            throw AcquisitionFailure(.rejected, "the assertion of identity \(config.name) has no issuer or audience")
        }
        // Google's service accounts name the scope inside the assertion.
        let extra = config.scope.map { ["scope": $0] } ?? [:]
        do {
            return try JWTAssertion.bearerGrant(issuer: issuer, subject: bearer.subject, audience: audience, extraClaims: extra,
                                                key: key, keyID: keyID, now: now)
        } catch {
            throw AcquisitionFailure(.transient, "cannot sign the assertion of identity \(config.name): \(error)")
        }
    }

    /// A key that cannot be loaded will not load on a retry either, unless its file is
    /// fixed: a failure that backs off, like an IdP that is down.
    private func loadKey<Key>(_ load: () throws(CryptoError) -> Key) throws(AcquisitionFailure) -> Key {
        do {
            return try load()
        } catch {
            throw AcquisitionFailure(.transient, "cannot load the key of identity \(config.name): \(error)")
        }
    }
}
