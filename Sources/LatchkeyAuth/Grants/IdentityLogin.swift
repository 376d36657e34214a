#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig
import Logging

/// `latchkey login IDENTITY`: gets an identity its first token with a person's help, by
/// the authorization code grant with PKCE and a loopback redirect (RFC 8252) or by the
/// device grant (RFC 8628). Identities whose grant needs no person make one token request
/// instead, which checks their credentials; a seeded refresh token is redeemed; a recipe
/// runs, asking the person for its prompts' values.
public struct IdentityLogin: Sendable {
    /// What the person is asked to do, and what happened meanwhile.
    public enum Prompt: Sendable {
        /// Open `url` in a browser and approve; the browser comes back to `redirectURI`.
        case openBrowser(url: String, redirectURI: String)
        /// Enter the user code at the verification URI, on any device.
        case enterCode(DeviceAuthorization)
        /// A request to the redirect URI that was not this login's redirect.
        case ignored(String)
    }

    public enum Method: Sendable, Equatable {
        case authorizationCode
        case deviceCode
        /// The grant needs no person: one token request checks its credentials (or redeems
        /// the configured refresh token).
        case tokenRequest
        /// The recipe runs, asking for the values of its prompts, if it has any, as the
        /// steps that need them come.
        case recipe
        /// Nothing a login can do for this identity, and why.
        case none(String)
    }

    public let identity: IdentityConfig
    private let source: OAuthTokenSource
    /// Nil unless the identity is a recipe.
    private let recipe: RecipeTokenSource?

    /// Resolves the identity's own secrets only: a login does not need the rest of the
    /// configuration's credentials to be there.
    public init(
        identity: IdentityConfig, client: AuthHTTPClient,
        environment: [String: String] = ProcessInfo.processInfo.environment, sourceName: String = "config"
    ) throws(ConfigErrors) {
        self.identity = identity
        let credentials = try CredentialStore(entries: identity.secretEntries, environment: environment, sourceName: sourceName,
                                              logger: Logger(label: "latchkey.credentials"))
        source = OAuthTokenSource(config: identity, credentials: credentials, client: client)
        recipe = RecipeTokenSource(config: identity, credentials: credentials, client: client)
    }

    public var method: Method {
        switch identity.grant {
        case .authorizationCode: .authorizationCode
        case .deviceCode: .deviceCode
        case .staticToken:
            .none("identity \(identity.name) uses a static token from its configuration; there is nothing to log in to")
        case .password, .clientCredentials, .custom, .jwtBearer, .tokenExchange, .refreshToken: .tokenRequest
        case .recipe: .recipe
        }
    }

    /// Runs the login and returns the token it obtained. `timeout` bounds the wait for the
    /// browser's redirect; a device code ends at its own `expires_in`. `readPrompt` asks the
    /// person for a recipe's prompt values; without it, a recipe that has prompts fails.
    public func run(
        timeout: Duration, prompt: @escaping @Sendable (Prompt) -> Void, readPrompt: RecipePromptReader? = nil
    ) async throws(LoginError) -> TokenSet {
        do {
            if let recipe { return try await recipe.run(readPrompt: readPrompt, now: Date()) }
            switch identity.grant {
            case .authorizationCode(let login):
                return try await logInWithBrowser(login, timeout: timeout, prompt: prompt)
            case .deviceCode(let endpoint):
                return try await logInWithDeviceCode(endpoint, prompt: prompt)
            case .refreshToken:
                return try await redeemConfiguredRefreshToken()
            default:
                if case .none(let reason) = method { throw LoginError.failed(reason) }
                return try await source.acquire(.grant, refreshToken: nil, now: Date())
            }
        } catch {
            // Ctrl-C during a request to the IdP fails that request first.
            if Task.isCancelled { throw .cancelled }
            switch error {
            case let failure as AcquisitionFailure: throw .failed(failure.misconfiguration?.description ?? failure.message)
            case let error as LoginError: throw error
            default: throw .failed("\(error)")
            }
        }
    }

    private func logInWithBrowser(
        _ login: IdentityConfig.AuthorizationCodeLogin, timeout: Duration, prompt: @escaping @Sendable (Prompt) -> Void
    ) async throws -> TokenSet {
        let endpoint = try await source.authorizationEndpoint(configured: login.authorizationURL, now: Date())
        var tokenRequest = try await source.loginTokenRequest(.authorizationCode(code: "", redirectURI: "", codeVerifier: ""), now: Date())
        let receiver = try LoopbackRedirectReceiver(port: login.redirectPort, path: login.redirectPath)
        let pkce = try PKCE.generate()
        // RFC 6749 §10.12: unguessable, and new for each attempt.
        let state = Base64URL.encode(try SecureRandom.bytes(count: 32))
        let request = source.authorizationRequest(endpoint: endpoint, redirectURI: receiver.redirectURI, state: state, pkce: pkce)
        prompt(.openBrowser(url: request.url, redirectURI: receiver.redirectURI))
        let code = try await receiver.code(for: request, timeout: timeout) { prompt(.ignored($0)) }
        tokenRequest.grant = .authorizationCode(code: code, redirectURI: receiver.redirectURI, codeVerifier: pkce.verifier)
        return try await redeem(tokenRequest)
    }

    private func logInWithDeviceCode(_ configured: String?, prompt: @escaping @Sendable (Prompt) -> Void) async throws -> TokenSet {
        let deviceRequest = try await source.deviceAuthorizationRequest(configured: configured, now: Date())
        let tokenRequest = try await source.loginTokenRequest(.deviceCode(""), now: Date())
        let issuedAt = Date()
        let authorization: DeviceAuthorization
        do {
            authorization = try await requestDeviceAuthorization(
                deviceRequest, client: source.client, options: identity.idpOptions, now: issuedAt)
        } catch {
            throw LoginError.endpoint(error)
        }
        prompt(.enterCode(authorization))
        return try await DeviceGrantPoller(authorization: authorization, issuedAt: issuedAt).poll { deviceCode throws(TokenEndpointError) in
            var request = tokenRequest
            request.grant = .deviceCode(deviceCode)
            return try await requestToken(request, client: source.client, options: identity.idpOptions, now: Date())
        }
    }

    /// The refresh token in the configuration, redeemed now: how a new one put there takes
    /// over from the token stored before, and how such an identity ends a logout.
    private func redeemConfiguredRefreshToken() async throws -> TokenSet {
        guard let seed = OAuthTokenSource.seed(identity, credentials: source.credentials)?.refreshToken else {
            throw LoginError.failed("the refresh_token of identity \(identity.name) has no value")
        }
        var token = try await source.acquire(.refresh, refreshToken: seed, now: Date())
        // RFC 6749 §6: an answer without a refresh token leaves the one sent in use.
        if token.refreshToken == nil { token.refreshToken = seed }
        return token
    }

    private func redeem(_ request: TokenRequest) async throws(LoginError) -> TokenSet {
        do {
            return try await requestToken(request, client: source.client, options: identity.idpOptions, now: Date())
        } catch {
            throw .endpoint(error)
        }
    }
}
