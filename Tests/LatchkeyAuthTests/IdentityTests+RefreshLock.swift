import Foundation
import Synchronization
import Testing
@testable import LatchkeyAuth

/// Two Identity instances on one store, as two processes (replicas, or `serve` and the CLI)
/// share it: the store's refresh lock lets one of them refresh, the other takes its token.
extension IdentityTests {
    enum SharedStore: String, CaseIterable, CustomTestStringConvertible {
        case memory
        case file
        case redis

        var testDescription: String { rawValue }
    }

    @Test(arguments: SharedStore.allCases)
    func twoIdentitiesSharingAStoreSpendTheRefreshTokenOnce(_ kind: SharedStore) async throws {
        let (first, second, resources) = try TokenStoreConformanceTests.StoreUnderTest(rawValue: kind.rawValue)!.makePair()
        let expired = TokenSet(accessToken: "a", refreshToken: "r1", expiresAt: now.addingTimeInterval(-1), obtainedAt: now.addingTimeInterval(-3600))
        try await first.save(expired, identity: "test")
        let rotated = TokenSet(accessToken: "b", refreshToken: "r2", expiresAt: now.addingTimeInterval(3600), obtainedAt: now)
        // Each replica's own view of the IdP; a second refresh with r1 would be refused.
        let sources = [ScriptedSource(answers: [.success(rotated)], gated: true), ScriptedSource(answers: [.success(rotated)], gated: true)]
        let identities = zip(sources, [first, second]).map { source, store in
            Identity(name: "test", source: source, store: store, events: RecordingEvents(), initialToken: expired, clock: { [now] in now })
        }
        let requests = { sources.map { $0.requests.withLock { $0.count } }.reduce(0, +) }
        let answers = await withTaskGroup(of: Result<IssuedToken, IdentityUnavailable>.self) { group in
            for identity in identities {
                for _ in 0..<10 { group.addTask { await demand(identity) } }
            }
            while requests() == 0 { try? await Task.sleep(for: .milliseconds(5)) }
            // The other replica is waiting for the lock by now, not asking the IdP.
            try? await Task.sleep(for: .milliseconds(200))
            #expect(requests() == 1)
            for source in sources { source.release() }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(requests() == 1)
        #expect(sources.flatMap { $0.requests.withLock { $0.map(\.1) } } == ["r1"])
        #expect(answers.count == 20)
        #expect(answers.allSatisfy { (try? $0.get().accessToken) == "b" })
        expectSame(try await second.load(identity: "test"), rotated)
        withExtendedLifetime(resources) {}
    }

    @Test func aStoreThatCannotBeReachedDoesNotStopTheRefresh() async {
        let source = ScriptedSource(answers: [.success(token("b", refresh: "r2"))])
        let events = RecordingEvents()
        let identity = Identity(name: "test", source: source, store: UnreachableStore(), events: events,
                                initialToken: token("a", refresh: "r1"), clock: { [now] in now })
        let result = await withCheckedContinuation { continuation in
            identity.rejected(generation: 1) { continuation.resume(returning: $0) }
        }
        #expect(result == .success(IssuedToken(accessToken: "b", generation: 2)))
        #expect(source.requests.withLock { $0.map(\.1) } == ["r1"])
        let details = events.events.withLock { $0.compactMap(\.detail) }
        #expect(details.contains { $0.hasPrefix("cannot take the refresh lock, going on without it: redis down") })
        #expect(details.contains { $0.hasPrefix("cannot store the token: redis down") })
    }
}

/// A store whose server is away: every call fails.
struct UnreachableStore: TokenStore {
    static let error = TokenStoreError(.unavailable, "redis down")
    func load(identity: String) async throws -> TokenSet? { throw Self.error }
    func save(_ token: TokenSet?, identity: String) async throws { throw Self.error }
    func acquireRefreshLock(identity: String) async throws -> RefreshLockAttempt { throw Self.error }
    func releaseRefreshLock(_ lease: RefreshLease) async {}
}
