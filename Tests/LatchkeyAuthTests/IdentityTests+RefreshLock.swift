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

    /// The token both processes hold, expired and in the store, and the one its refresh
    /// gets (with a rotated refresh token).
    var expired: TokenSet { TokenSet(accessToken: "a", refreshToken: "r1", expiresAt: now.addingTimeInterval(-1), obtainedAt: now.addingTimeInterval(-3600)) }
    var rotated: TokenSet { TokenSet(accessToken: "b", refreshToken: "r2", expiresAt: now.addingTimeInterval(3600), obtainedAt: now) }

    /// Two handles on one store of `kind` holding `expired`, and what keeps them alive.
    func sharedStore(_ kind: SharedStore) async throws -> (first: any TokenStore, second: any TokenStore, resources: AnyObject?) {
        let pair = try TokenStoreConformanceTests.StoreUnderTest(rawValue: kind.rawValue)!.makePair()
        try await pair.first.save(expired, identity: "test")
        return pair
    }

    @Test(arguments: SharedStore.allCases)
    func twoIdentitiesSharingAStoreSpendTheRefreshTokenOnce(_ kind: SharedStore) async throws {
        let (first, second, resources) = try await sharedStore(kind)
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

    @Test(arguments: SharedStore.allCases)
    func aLogoutWaitsForARefreshInFlightAndRemovesItsToken(_ kind: SharedStore) async throws {
        let (serving, cli, resources) = try await sharedStore(kind)
        let source = ScriptedSource(answers: [.success(rotated)], gated: true)
        let identity = Identity(name: "test", source: source, store: serving, events: RecordingEvents(), initialToken: expired, clock: { [now] in now })
        async let answer = demand(identity)
        while source.requests.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(5)) }
        // `latchkey logout` while the refresh is out: it waits for the refresh lock, so the
        // refresh saves first, and the logout then removes (for revocation) what it saved.
        let logout = Task { try await cli.logOutUnderRefreshLock(identity: "test") }
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await !cli.isLoggedOut(identity: "test"))
        source.release()
        #expect(await answer == .success(IssuedToken(accessToken: "b", generation: 2)))
        expectSame(try await logout.value, rotated)
        #expect(try await serving.load(identity: "test") == nil)
        #expect(try await serving.isLoggedOut(identity: "test"))
        // The next token request, under the lock, finds the mark and asks the IdP nothing.
        identity.rejected(generation: 2) { _ in }
        #expect(await demand(identity) == .failure(.loginRequired(reason: Identity.loggedOutReason)))
        #expect(source.requests.withLock { $0.count } == 1)
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
    func logOut(identity: String) async throws -> TokenSet? { throw Self.error }
    func isLoggedOut(identity: String) async throws -> Bool { throw Self.error }
    func loadCookies(identity: String) async throws -> [String] { throw Self.error }
    func saveCookies(_ cookies: [String], identity: String) async throws { throw Self.error }
    func saveFailure(_ failure: FailureRecord?, identity: String) async throws { throw Self.error }
    func loadFailure(identity: String) async throws -> FailureRecord? { throw Self.error }
}
