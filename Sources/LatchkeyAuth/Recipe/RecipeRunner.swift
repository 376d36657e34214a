#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig

/// Asks a person for the value of a prompt (`{prompts.otp}`) and returns what they typed.
public typealias RecipePromptReader = @Sendable (RecipePrompt) async throws -> String

/// Runs a recipe: its steps one after the other through the control plane's HTTP client
/// with the identity's IdP options, each rendered from the captures made so far, the
/// identity's secrets and what a person typed; or its `logout` step with a stored result.
/// The thin I/O around the pure parts (`RecipeStep+Request`, `RecipeStep+Answer`,
/// `RecipeStepFailure+Message`, `RecipeExpiry+Date`).
struct RecipeRunner: Sendable {
    let identity: IdentityConfig
    let recipe: Recipe
    let client: AuthHTTPClient
    /// Asks for a prompt's value when the first step that renders it is about to go; nil
    /// where no person is there (`serve`), and a step that needs one fails.
    let readPrompt: RecipePromptReader?

    /// Runs every step and returns the result: every capture, the token capture's value as
    /// the access token, the expiry the recipe says. No refresh token: a renewal runs the
    /// whole recipe again. `now` dates the result.
    func run(secrets: CredentialSnapshot, now: Date) async throws(AcquisitionFailure) -> TokenSet {
        var values = RecipeValues(identity: identity.name, recipe: recipe, secrets: secrets)
        for (index, step) in recipe.steps.enumerated() {
            let captured = try await perform(step, at: identity.configPath("steps") + "[\(index)]", values: &values, now: now).captures
            values.captures.merge(captured) { $1 }
        }
        let expiresAt = try recipe.expiry.expiresAt(captures: values.captures, now: now, identity: identity,
                                                   redaction: values.redaction(recipe))
        return TokenSet(accessToken: recipe.tokenCapture.flatMap { values.captures[$0] } ?? "", tokenType: nil, expiresAt: expiresAt,
                        obtainedAt: now, captures: values.captures)
    }

    /// Runs the `logout` step with `captures`, those of the result being logged out, and
    /// returns it as messages name it (`step 'logout' (DELETE https://…)`); nil when the
    /// recipe has no such step.
    func logOut(captures: [String: String], secrets: CredentialSnapshot, now: Date) async throws(AcquisitionFailure) -> String? {
        guard let step = recipe.logout else { return nil }
        var values = RecipeValues(identity: identity.name, recipe: recipe, secrets: secrets, captures: captures)
        let request = try await perform(step, at: identity.configPath("logout"), values: &values, now: now).request
        return "step '\(step.name)' (\(request))"
    }

    /// Sends one step and reads its answer; a failure comes back explained
    /// (`RecipeStepFailure.acquisitionFailure`).
    private func perform(
        _ step: RecipeStep, at configPath: String, values: inout RecipeValues, now: Date
    ) async throws(AcquisitionFailure) -> (captures: [String: String], request: String) {
        try await askPrompts(of: step, values: &values)
        var place = RecipeStepPlace(identity: identity.name, step: step, configPath: configPath)
        let redaction = values.redaction(recipe)
        let shown = step.shownRequest(baseURL: recipe.baseURL)
        place.request = shown
        do throws(RecipeStepFailure) {
            let url = try step.url(baseURL: recipe.baseURL, values: values)
            let request = try step.httpRequest(url: url, values: values, options: identity.idpOptions)
            let response: AuthHTTPResponse
            do {
                response = try await client.send(request)
            } catch {
                throw RecipeStepFailure.transport(error)
            }
            return (try step.read(response, now: now), shown)
        } catch {
            throw error.acquisitionFailure(at: place, redaction: redaction)
        }
    }

    /// Asks for the prompts `step` renders that have no value yet, in the order it renders them.
    private func askPrompts(of step: RecipeStep, values: inout RecipeValues) async throws(AcquisitionFailure) {
        guard let readPrompt else { return }
        for case .prompt(let name) in step.placeholders where values.answers[name] == nil {
            guard let prompt = recipe.prompts.first(where: { $0.name == name }) else { continue }
            do {
                values.answers[name] = try await readPrompt(prompt)
            } catch {
                throw AcquisitionFailure(.rejected, "cannot read the value of {prompts.\(name)}: \(error)")
            }
        }
    }
}
