import Foundation
import LatchkeyAuth
import LatchkeyConfig
import Logging
import Testing
@testable import Latchkey

/// What log lines mask: the credentials, and the secret captures a recipe identity holds
/// from the moment it holds them until they go.
@Suite struct HeldSecretsRedactionTests {
    @Test func theSecretCapturesHeldNowAreMaskedBesideTheCredentials() async throws {
        let capture = { (name: String, secret: Bool) in RecipeCapture(name: name, source: .json(try! JSONPath(parsing: name)), secret: secret) }
        let recipe = Recipe(steps: [RecipeStep(name: "session", request: RecipeRequest(method: "GET", url: try RecipeTemplate(parsing: "https://h/s")),
                                               captures: [capture("request_token", false), capture("session_id", true)])])
        let config = Config(listeners: [], routes: [], credentials: ["tmdb-key": .inline("k-1")],
                            identities: [IdentityConfig(name: "tmdb", grant: .recipe(recipe)),
                                         IdentityConfig(name: "kii", grant: .staticToken(.inline("kii-t")))])
        let credentials = try CredentialStore(config: config, environment: [:])
        let client = try AuthHTTPClient()
        defer { client.shutdown() }
        let registry = try IdentityRegistry(config: config, credentials: credentials, store: MemoryTokenStore(), client: client,
                                            logger: Logger(label: "test"), metrics: MetricsRegistry(),
                                            recorder: AuthEventRecorder())
        defer { registry.shutdown() }
        let redaction = HeldSecretsRedaction(credentials: credentials)
        #expect(redaction.redactionMask.values == ["kii-t", "k-1"])
        redaction.follow(registry)
        #expect(redaction.redactionMask.values == ["kii-t", "k-1"])

        let tmdb = try #require(registry.identities["tmdb"])
        try await tmdb.loggedIn(TokenSet(accessToken: "sess-secret-79", tokenType: nil, obtainedAt: Date(),
                                         captures: ["request_token": "rt-shown", "session_id": "sess-secret-79"]))
        // Longest first; `secret: false` is not masked.
        #expect(redaction.redactionMask.values == ["sess-secret-79", "kii-t", "k-1"])
        tmdb.storeChanged(.removed)
        #expect(redaction.redactionMask.values == ["kii-t", "k-1"])
    }
}
