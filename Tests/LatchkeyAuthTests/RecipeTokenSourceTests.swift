import Foundation
import LatchkeyConfig
import Synchronization
import Testing
@testable import LatchkeyAuth

/// The recipe end to end: `RecipeTokenSource` through `AuthHTTPClient` against a stub of
/// TheMovieDB's authentication API over loopback.
@Suite(.serialized) struct RecipeTokenSourceTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func source(_ server: LoopbackServer, _ client: AuthHTTPClient, recipe: Recipe? = nil,
                        password: String = TMDBRecipe.password) throws -> RecipeTokenSource {
        let config = TMDBRecipe.config(recipe ?? TMDBRecipe.recipe(baseURL: server.url + "/3", expiry: .lifetime(.seconds(3600))))
        let credentials = try CredentialStore(entries: config.secretEntries.map { entry in
            var entry = entry
            if entry.name.hasSuffix(":secret:password") { entry.source = .inline(password) }
            return entry
        }, environment: [:])
        return try #require(RecipeTokenSource(config: config, credentials: credentials, client: client))
    }

    @Test func theRecipeMakesASessionFromItsThreeSteps() async throws {
        let server = try TMDBRecipe.server()
        let client = try makeClient()
        defer { client.shutdown() }
        let token = try await source(server, client).acquire(.grant, refreshToken: nil, now: now)
        #expect(token == TokenSet(accessToken: "sess-79", tokenType: nil, expiresAt: now.addingTimeInterval(3600), obtainedAt: now,
                                  captures: ["request_token": "rt-1", "session_id": "sess-79"]))
        let requests = server.requests
        #expect(requests.map(\.method) == ["GET", "POST", "POST"])
        #expect(requests[1].bodyText == #"{"username":"moviefan","password":"pw-77#secret","request_token":"rt-1"}"#)
        #expect(requests[1].field("Content-Type") == "application/json")
        #expect(requests.allSatisfy { $0.field("Accept") == "application/json" })
    }

    @Test func aWrongPasswordFailsAtValidateWithLoginWithoutTheSecrets() async throws {
        let server = try TMDBRecipe.server { _ in
            .json(401, #"{"status_code":30,"status_message":"Invalid username and/or password: You did not provide a valid login.","success":false}"#)
        }
        let client = try makeClient()
        defer { client.shutdown() }
        let failure = await #expect(throws: AcquisitionFailure.self) {
            try await source(server, client, password: "wrong-pw").acquire(.grant, refreshToken: nil, now: now)
        }
        #expect(failure?.kind == .rejected)
        #expect(failure?.message == "step 'validate_with_login' (POST \(server.url)/3/authentication/token/validate_with_login): "
            + "HTTP 401, expected 200; check credentials.tmdb-key, identities.tmdb-user.secrets.username, identities.tmdb-user.secrets.password")
        #expect(server.requests.count == 2)
    }

    @Test func anOverloadedServerIsTransientWithItsRetryAfter() async throws {
        let server = try TMDBRecipe.server { _ in .response(503, [("Retry-After", "120"), ("Content-Type", "text/html")], body: "<h1>busy</h1>") }
        let client = try makeClient()
        defer { client.shutdown() }
        let failure = await #expect(throws: AcquisitionFailure.self) {
            try await source(server, client).acquire(.grant, refreshToken: nil, now: now)
        }
        #expect(failure?.kind == .transient)
        #expect(failure?.retryAfter == .seconds(120))
    }

    @Test func aServerThatIsDownIsTransient() async throws {
        let port = try LoopbackServer.closedPort()
        let server = try TMDBRecipe.server()
        let client = try makeClient()
        defer { client.shutdown() }
        let recipe = TMDBRecipe.recipe(baseURL: "http://127.0.0.1:\(port)/3")
        let failure = await #expect(throws: AcquisitionFailure.self) {
            try await source(server, client, recipe: recipe).acquire(.grant, refreshToken: nil, now: now)
        }
        #expect(failure?.kind == .transient)
        #expect(failure?.message.hasPrefix("step 'request_token' (GET http://127.0.0.1:\(port)/3/authentication/token/new): no answer:") == true)
        #expect(failure?.message.contains(TMDBRecipe.key) == false)
    }

    @Test func logoutRunsTheLogoutStepWithTheStoredCaptures() async throws {
        let server = try TMDBRecipe.server()
        let client = try makeClient()
        defer { client.shutdown() }
        let token = TokenSet(accessToken: "sess-79", tokenType: nil, obtainedAt: now, captures: ["session_id": "sess-79"])
        let step = try await source(server, client).logOut(token, now: now)
        #expect(step == "step 'logout' (DELETE \(server.url)/3/authentication/session)")
        #expect(server.requests.last?.bodyText == #"{"session_id":"sess-79"}"#)
    }

    @Test func aPromptIsAskedWhenTheFirstStepThatNeedsItIsAboutToRun() async throws {
        let server = try TMDBRecipe.server { request in
            request.bodyText.contains(#""otp":"424242""#) ? .json(200, #"{"success":true}"#) : .json(401, #"{"success":false}"#)
        }
        let client = try makeClient()
        defer { client.shutdown() }
        var recipe = TMDBRecipe.recipe(baseURL: server.url + "/3")
        recipe.prompts = [RecipePrompt(name: "otp", text: "One-time code")]
        guard case .json(.object(var members)) = recipe.steps[1].request.body else { Issue.record("no JSON body"); return }
        members.append(("otp", .string(TMDBRecipe.template("{prompts.otp}"))))
        recipe.steps[1].request.body = .json(.object(members))
        let source = try source(server, client, recipe: recipe)
        #expect(!source.canGrant)

        let asked = Mutex<[(String, Int)]>([])
        let token = try await source.run(readPrompt: { prompt in
            asked.withLock { $0.append((prompt.text, server.requests.count)) }
            return "424242"
        }, now: now)
        #expect(token.captures["session_id"] == "sess-79")
        // Once, after the first step and before the second.
        #expect(asked.withLock { $0.map(\.0) } == ["One-time code"])
        #expect(asked.withLock { $0.map(\.1) } == [1])
        // Where no person is there to type it, the step says who must.
        let unattended = await #expect(throws: AcquisitionFailure.self) { try await source.acquire(.grant, refreshToken: nil, now: now) }
        #expect(unattended?.message.contains("{prompts.otp} is typed by a person: run `latchkey login tmdb-user`") == true)
    }

    @Test func anIdentityRunsTheRecipeAndItsSecretCapturesAreMasked() async throws {
        let server = try TMDBRecipe.server()
        let client = try makeClient()
        defer { client.shutdown() }
        var recipe = TMDBRecipe.recipe(baseURL: server.url + "/3")
        recipe.steps[0].captures[0].secret = false
        let source = try source(server, client, recipe: recipe)
        let identity = Identity(name: TMDBRecipe.identity, source: source, store: MemoryTokenStore(), events: RecordingEvents())
        #expect(identity.heldSecrets.values.isEmpty)
        let issued = await withCheckedContinuation { continuation in identity.demand { continuation.resume(returning: $0) } }
        #expect(try issued.get().accessToken == "sess-79")
        #expect(try issued.get().captures == ["request_token": "rt-1", "session_id": "sess-79"])
        // `secret: false` makes request_token showable; session_id stays masked.
        #expect(identity.heldSecrets.values == ["sess-79"])
        #expect(identity.heldSecrets.generation == identity.tokenGeneration)
    }
}
