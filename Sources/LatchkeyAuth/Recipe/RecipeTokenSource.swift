#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig

/// A `grant: recipe` identity's source: every acquisition, first or renewal, runs the
/// whole recipe (there is no refresh token), single flight as the lifecycle runs every
/// source. Secrets are read from the credential store at each run, so a rotated password
/// file is used from then on.
public final class RecipeTokenSource: TokenSource {
    let config: IdentityConfig
    let recipe: Recipe
    let credentials: CredentialStore
    let client: AuthHTTPClient

    /// Nil when `config` is not a recipe identity.
    public init?(config: IdentityConfig, credentials: CredentialStore, client: AuthHTTPClient) {
        guard case .recipe(let recipe) = config.grant else { return nil }
        self.config = config
        self.recipe = recipe
        self.credentials = credentials
        self.client = client
    }

    /// A recipe with prompts runs only where a person types them: `latchkey login`.
    public var canGrant: Bool { !config.logsInInteractively }

    public var renewable: Bool { true }

    public func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
        try await run(readPrompt: nil, now: now)
    }

    /// Runs the recipe, asking `readPrompt` for the values a person types (`latchkey login`).
    public func run(readPrompt: RecipePromptReader?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
        try await runner(readPrompt).run(secrets: credentials.snapshot, now: now)
    }

    /// Runs the recipe's `logout` step with the captures of `token`, the result being logged
    /// out; returns the step as messages name it, nil when the recipe has none.
    public func logOut(_ token: TokenSet, now: Date) async throws(AcquisitionFailure) -> String? {
        try await runner(nil).logOut(captures: token.captures, secrets: credentials.snapshot, now: now)
    }

    /// Its secret captures: logs mask them like credentials.
    public func secretValues(of token: TokenSet) -> [String] {
        let secret = recipe.secretCaptures
        return token.captures.compactMap { secret.contains($0.key) ? $0.value : nil }
    }

    private func runner(_ readPrompt: RecipePromptReader?) -> RecipeRunner {
        RecipeRunner(identity: config, recipe: recipe, client: client, readPrompt: readPrompt)
    }
}
