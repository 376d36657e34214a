#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig
import Logging

/// `latchkey logout IDENTITY`: takes the identity's tokens out of the token store and
/// marks it logged out there, in one step under the identity's refresh lock (so that no
/// refresh in flight in a serve or a replica saves a token over the mark), then revokes
/// them at the IdP (RFC 7009) where a revocation endpoint is known, or runs a recipe's
/// `logout` step with the captures it removed (TMDB's `DELETE authentication/session`). A
/// running serve takes the logout up within about a second and answers the identity's
/// routes `login_required`; no serve logs the identity back in by itself, even with a
/// password in the configuration, until `latchkey login`. The tokens leave the store
/// whatever the revocation's (or the step's) outcome: the user asked to log out.
public struct IdentityLogout: Sendable {
    public struct Outcome: Sendable, Equatable {
        /// Whether the store held a token.
        public var hadToken = false
        /// The revocation endpoint, when one is known.
        public var endpoint: String?
        /// "refresh token", "access token": what the IdP revoked.
        public var revoked: [String] = []
        /// What the IdP said it does not revoke (`unsupported_token_type`).
        public var unsupported: [String] = []
        /// A recipe's `logout` step that ran and was accepted, as messages name it:
        /// `step 'logout' (DELETE https://api.themoviedb.org/3/authentication/session)`.
        public var logoutStep: String?
        /// Why the revocation (or a recipe's logout step) failed; the tokens are out of the
        /// store all the same.
        public var failure: String?
    }

    public let identity: IdentityConfig
    /// The identity's secrets, or why they cannot be read (which fails the revocation, not
    /// the logout).
    private let credentials: Result<CredentialStore, ConfigErrors>
    private let client: AuthHTTPClient

    /// Resolves the identity's own secrets only (its client secret authenticates the
    /// revocation; a recipe's logout step may render its secrets). An identity whose token
    /// is static has no tokens of Latchkey's to log out of: the caller checks `keepsTokens`
    /// first.
    public init(
        identity: IdentityConfig, client: AuthHTTPClient,
        environment: [String: String] = ProcessInfo.processInfo.environment, sourceName: String = "config"
    ) {
        self.identity = identity
        self.client = client
        credentials = Result { () throws(ConfigErrors) in
            try CredentialStore(entries: identity.secretEntries, environment: environment, sourceName: sourceName,
                                logger: Logger(label: "latchkey.credentials"))
        }
    }

    /// Throws only when the store cannot be changed; then nothing was revoked either.
    public func run(store: any TokenStore) async throws -> Outcome {
        var outcome = Outcome()
        guard let token = try await store.logOutUnderRefreshLock(identity: identity.name) else { return outcome }
        outcome.hadToken = true
        // A recipe without a logout step calls nothing: its secrets are not needed.
        if case .recipe(let recipe) = identity.grant, recipe.logout == nil { return outcome }
        let credentials: CredentialStore
        switch self.credentials {
        case .success(let ready): credentials = ready
        case .failure(let error):
            outcome.failure = error.description
            return outcome
        }
        if let recipe = RecipeTokenSource(config: identity, credentials: credentials, client: client) {
            do {
                outcome.logoutStep = try await recipe.logOut(token, now: Date())
            } catch {
                outcome.failure = error.misconfiguration?.description ?? error.message
            }
            return outcome
        }
        let source = OAuthTokenSource(config: identity, credentials: credentials, client: client)
        do {
            outcome.endpoint = try await source.revocationEndpoint(now: Date())
        } catch {
            outcome.failure = error.message
            return outcome
        }
        guard let endpoint = outcome.endpoint else { return outcome }
        let revocation = await source.revoke(token, at: endpoint, now: Date())
        outcome.revoked = revocation.revoked
        outcome.unsupported = revocation.unsupported
        outcome.failure = revocation.failure
        return outcome
    }
}
