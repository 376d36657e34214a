import Foundation
import Testing
@testable import LatchkeyAuth

/// The glue around a misconfiguration: kept in the store, answered at once, retried after a
/// secret changes.
extension IdentityTests {
    static let refusal = "the authorization server refused the request with invalid_client (HTTP 401)"
    static let problem = Misconfiguration(reason: refusal, configKey: "identities.test.client_secret")

    @Test func aMisconfigurationIsKeptInTheStoreAndAnsweredUntilTheSecretsChange() async {
        let source = ScriptedSource(answers: [
            .failure(AcquisitionFailure(.misconfigured(configKey: "identities.test.client_secret"), Self.refusal)),
            .success(token("a")),
        ])
        let store = RecordingStore()
        let events = RecordingEvents()
        let identity = identity(source, events: events, store: store)
        #expect(await demand(identity) == .failure(.misconfigured(Self.problem)))
        #expect(await store.failures == [FailureRecord(message: Self.refusal, configKey: "identities.test.client_secret", at: now)])
        #expect(events.events.withLock { $0 } == [AuthEvent(identity: "test", kind: .failed, detail: Self.problem.description)])
        // Answered at once from now on, without a token request.
        #expect(await demand(identity) == .failure(.misconfigured(Self.problem)))
        #expect(source.requests.withLock { $0.count } == 1)

        identity.credentialsChanged()
        #expect(await demand(identity) == .success(IssuedToken(accessToken: "a", generation: 1)))
        #expect(source.requests.withLock { $0.count } == 2)
        // Saved, which clears the stored failure (TokenStoreConformanceTests).
        #expect(await store.saved == [token("a")])
    }
}
