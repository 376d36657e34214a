import Foundation
import LatchkeyConfig
import Synchronization
import Testing
@testable import LatchkeyAuth

/// `latchkey login` and `logout` for a recipe identity, against the stub of TheMovieDB.
@Suite(.serialized) struct RecipeLoginTests {
    private func config(_ server: LoopbackServer, prompts: [RecipePrompt] = []) -> IdentityConfig {
        var recipe = TMDBRecipe.recipe(baseURL: server.url + "/3")
        recipe.prompts = prompts
        return TMDBRecipe.config(recipe)
    }

    @Test func loginRunsTheRecipe() async throws {
        let server = try TMDBRecipe.server()
        let client = try makeClient()
        defer { client.shutdown() }
        let login = try IdentityLogin(identity: config(server), client: client, environment: [:])
        #expect(login.method == .recipe)
        let token = try await login.run(timeout: .seconds(5), prompt: { _ in })
        #expect(token.accessToken == "sess-79")
        #expect(token.captures == ["request_token": "rt-1", "session_id": "sess-79"])
    }

    @Test func aLoginThatFailsSaysWhichStep() async throws {
        let server = try TMDBRecipe.server { _ in .json(401, #"{"status_code":30,"success":false}"#) }
        let client = try makeClient()
        defer { client.shutdown() }
        let login = try IdentityLogin(identity: config(server), client: client, environment: [:])
        let error = await #expect(throws: LoginError.self) { try await login.run(timeout: .seconds(5), prompt: { _ in }) }
        guard case .failed(let message) = error else { Issue.record("not a failure: \(String(describing: error))"); return }
        #expect(message.hasPrefix("step 'validate_with_login' (POST \(server.url)/3/authentication/token/validate_with_login): HTTP 401"))
        #expect(message.contains("identities.tmdb-user.secrets.password"))
        #expect(!message.contains(TMDBRecipe.password) && !message.contains(TMDBRecipe.key))
    }

    @Test func aPromptIsAskedThroughTheLogin() async throws {
        let server = try TMDBRecipe.server()
        let client = try makeClient()
        defer { client.shutdown() }
        var identity = config(server, prompts: [RecipePrompt(name: "otp", text: "One-time code")])
        guard case .recipe(var recipe) = identity.grant else { return }
        recipe.steps[0].request.headers = [RecipeField(name: "X-OTP", value: TMDBRecipe.template("{prompts.otp}"))]
        identity.grant = .recipe(recipe)
        let login = try IdentityLogin(identity: identity, client: client, environment: [:])
        let asked = Mutex<[String]>([])
        _ = try await login.run(timeout: .seconds(5), prompt: { _ in }, readPrompt: { prompt in
            asked.withLock { $0.append(prompt.name) }
            return "424242"
        })
        #expect(asked.withLock { $0 } == ["otp"])
        #expect(server.requests.first?.field("X-OTP") == "424242")
    }

    /// Logs the identity out of a store that holds a session, against `server`.
    private func logOut(_ server: LoopbackServer, store: MemoryTokenStore) async throws -> IdentityLogout.Outcome {
        let client = try makeClient()
        defer { client.shutdown() }
        await store.save(TokenSet(accessToken: "sess-79", tokenType: nil, obtainedAt: Date(), captures: ["session_id": "sess-79"]),
                         identity: TMDBRecipe.identity)
        return try await IdentityLogout(identity: config(server), client: client, environment: [:]).run(store: store)
    }

    @Test func logoutRemovesTheResultThenRunsTheLogoutStepWithItsCaptures() async throws {
        let server = try TMDBRecipe.server()
        let store = MemoryTokenStore()
        let outcome = try await logOut(server, store: store)
        #expect(outcome.hadToken)
        #expect(outcome.logoutStep == "step 'logout' (DELETE \(server.url)/3/authentication/session)")
        #expect(outcome.failure == nil)
        #expect(server.requests.map(\.method) == ["DELETE"])
        #expect(server.requests.first?.bodyText == #"{"session_id":"sess-79"}"#)
        #expect(await store.isLoggedOut(identity: TMDBRecipe.identity))
    }

    @Test func aFailingLogoutStepIsReportedAndTheLocalLogoutStands() async throws {
        let server = try TMDBRecipe.server(logout: .json(401, #"{"status_code":3,"success":false}"#))
        let store = MemoryTokenStore()
        let outcome = try await logOut(server, store: store)
        #expect(outcome.logoutStep == nil)
        #expect(outcome.failure?.hasPrefix("step 'logout' (DELETE \(server.url)/3/authentication/session): HTTP 401, expected a 2xx status") == true)
        #expect(outcome.failure?.contains("sess-79") == false)
        #expect(await store.load(identity: TMDBRecipe.identity) == nil)
        #expect(await store.isLoggedOut(identity: TMDBRecipe.identity))
    }
}
