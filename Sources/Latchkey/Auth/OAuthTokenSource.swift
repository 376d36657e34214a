#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth

/// An identity's token endpoint and grant. Secrets are read from the credential store at
/// each request, so a rotated client secret or password file is used from then on.
struct OAuthTokenSource: TokenSource {
    let config: IdentityConfig
    let endpoint: String
    let credentials: CredentialStore
    let client: AuthHTTPClient

    /// Every grant here can run again without a person, except a seeded refresh token.
    var canGrant: Bool {
        if case .refreshToken = config.grant { return false }
        return true
    }

    var renewable: Bool { true }

    /// For a refresh-token identity, the token it starts from: no access token yet, the
    /// configured refresh token to get one.
    static func seed(_ config: IdentityConfig, credentials: CredentialStore) -> TokenSet? {
        guard case .refreshToken = config.grant,
              let refreshToken = credentials[IdentityConfig.secretName(identity: config.name, "refresh_token")]
        else { return nil }
        return TokenSet(accessToken: "", refreshToken: refreshToken, expiresAt: .distantPast, obtainedAt: .distantPast)
    }

    func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
        let secrets = credentials.snapshot
        let request = try tokenRequest(kind, refreshToken: refreshToken, secrets: secrets)
        do throws(TokenEndpointError) {
            let httpRequest = try request.httpRequest(options: config.idpOptions)
            let response: AuthHTTPResponse
            do {
                response = try await client.send(httpRequest)
            } catch {
                throw TokenEndpointError.transport(error)
            }
            return try TokenResponse.parse(response, now: now).tokenSet(obtainedAt: now)
        } catch {
            throw AcquisitionFailure(error.isInvalidGrant ? .rejected : .transient, error.message, retryAfter: error.retryAfter)
        }
    }

    private func tokenRequest(_ kind: AcquisitionKind, refreshToken: String?, secrets: CredentialSnapshot) throws(AcquisitionFailure) -> TokenRequest {
        func secret(_ field: String) throws(AcquisitionFailure) -> String {
            guard let value = secrets[IdentityConfig.secretName(identity: config.name, field)] else {
                throw AcquisitionFailure(.transient, "the \(field) of identity \(config.name) has no value")
            }
            return value
        }
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
        case (.grant, .staticToken):
            throw AcquisitionFailure(.rejected, "a static token has no token endpoint")
        }
        let clientAuthentication: ClientAuthentication? = switch config.clientAuth {
        case .clientSecretBasic: .clientSecretBasic(id: config.clientID ?? "", secret: try secret("client_secret"))
        case .clientSecretPost: .clientSecretPost(id: config.clientID ?? "", secret: try secret("client_secret"))
        case .none: config.clientID.map { .none(id: $0) }
        }
        return TokenRequest(endpoint: endpoint, grant: grant, clientAuthentication: clientAuthentication,
                            scope: config.scope, audience: config.audience, resources: config.resources)
    }
}
