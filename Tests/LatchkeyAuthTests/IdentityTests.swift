import Foundation
import Synchronization
import Testing
@testable import LatchkeyAuth

/// A token endpoint in memory: answers from a script, counts requests, and can hold a
/// request until the test lets it go.
final class ScriptedSource: TokenSource {
    let canGrant: Bool
    let renewable = true
    private let answers: Mutex<[Result<TokenSet, AcquisitionFailure>]>
    let requests = Mutex<[(AcquisitionKind, String?)]>([])
    private let gate: AsyncStream<Void>?
    private let open: AsyncStream<Void>.Continuation?

    /// What a start-up check of a restored token answers.
    private let verdict: Result<TokenValidity?, AcquisitionFailure>
    let checked = Mutex<[String]>([])

    init(canGrant: Bool = true, answers: [Result<TokenSet, AcquisitionFailure>], gated: Bool = false,
         verdict: Result<TokenValidity?, AcquisitionFailure> = .success(nil)) {
        self.canGrant = canGrant
        self.answers = Mutex(answers)
        self.verdict = verdict
        if gated {
            let (stream, continuation) = AsyncStream<Void>.makeStream()
            gate = stream
            open = continuation
        } else {
            gate = nil
            open = nil
        }
    }

    func release() { open?.yield() }

    /// Answers the script has not given yet.
    var unanswered: Int { answers.withLock { $0.count } }

    func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
        requests.withLock { $0.append((kind, refreshToken)) }
        if let gate { for await _ in gate { break } }
        let answer = answers.withLock { $0.isEmpty ? .failure(AcquisitionFailure(.transient, "script ended")) : $0.removeFirst() }
        return try answer.get()
    }

    func check(_ token: TokenSet, now: Date) async throws(AcquisitionFailure) -> TokenValidity? {
        checked.withLock { $0.append(token.accessToken) }
        return try verdict.get()
    }
}

final class RecordingEvents: AuthEventSink {
    let events = Mutex<[AuthEvent]>([])
    func record(_ event: AuthEvent) { events.withLock { $0.append(event) } }
    var kinds: [AuthEvent.Kind] { events.withLock { $0.map(\.kind) } }
}

/// A store that remembers what it was given and when, relative to waiters being answered.
actor RecordingStore: TokenStore {
    var saved: [TokenSet?] = []
    var failures: [FailureRecord?] = []
    func load(identity: String) -> TokenSet? { nil }
    func save(_ token: TokenSet?, identity: String) { saved.append(token) }
    func acquireRefreshLock(identity: String) -> RefreshLockAttempt { .acquired(RefreshLease(identity: identity, owner: "test", expiresAt: nil)) }
    func releaseRefreshLock(_ lease: RefreshLease) {}
    func logOut(identity: String) -> TokenSet? {
        Issue.record("an identity never logs itself out in the store")
        return nil
    }
    func isLoggedOut(identity: String) -> Bool { false }
    func loadCookies(identity: String) -> [String] { [] }
    func saveCookies(_ cookies: [String], identity: String) {}
    func saveFailure(_ failure: FailureRecord?, identity: String) { failures.append(failure) }
    func loadFailure(identity: String) -> FailureRecord? { failures.last ?? nil }
}

@Suite struct IdentityTests {
    let now = Date()

    func token(_ value: String, refresh: String? = "r") -> TokenSet {
        TokenSet(accessToken: value, refreshToken: refresh, expiresAt: now.addingTimeInterval(3600), obtainedAt: now)
    }

    func identity(_ source: ScriptedSource, events: RecordingEvents = RecordingEvents(), store: any TokenStore = MemoryTokenStore(), initial: TokenSet? = nil) -> Identity {
        Identity(name: "test", source: source, store: store, events: events, initialToken: initial, clock: { [now] in now })
    }

    /// Demands a token and waits for the answer.
    func demand(_ identity: Identity) async -> Result<IssuedToken, IdentityUnavailable> {
        await withCheckedContinuation { continuation in identity.demand { continuation.resume(returning: $0) } }
    }

    @Test func manyConcurrentDemandsCauseOneTokenRequest() async {
        let source = ScriptedSource(answers: [.success(token("a"))], gated: true)
        let identity = identity(source)
        let all = await withTaskGroup(of: Result<IssuedToken, IdentityUnavailable>.self) { group in
            for _ in 0..<500 {
                group.addTask { await demand(identity) }
            }
            // Let every demand register before the token endpoint answers.
            while source.requests.withLock({ $0.count }) == 0 { await Task.yield() }
            try? await Task.sleep(for: .milliseconds(50))
            source.release()
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(source.requests.withLock { $0.count } == 1)
        #expect(all.count == 500)
        #expect(all.allSatisfy { $0 == .success(IssuedToken(accessToken: "a", generation: 1)) })
        #expect(identity.current() == IssuedToken(accessToken: "a", generation: 1))
    }

    @Test func aRejectionRefreshesWithTheRefreshTokenAndStoresTheRotatedOneFirst() async {
        let source = ScriptedSource(answers: [.success(token("b", refresh: "r2"))])
        let store = RecordingStore()
        let events = RecordingEvents()
        let identity = identity(source, events: events, store: store, initial: token("a", refresh: "r1"))
        let result = await withCheckedContinuation { continuation in
            identity.rejected(generation: 1) { continuation.resume(returning: $0) }
        }
        #expect(result == .success(IssuedToken(accessToken: "b", generation: 2)))
        #expect(source.requests.withLock { $0.map(\.1) } == ["r1"])
        #expect(await store.saved == [token("b", refresh: "r2")])
        #expect(events.kinds == [.refreshed])
    }

    @Test func aRefusedRefreshReauthenticatesInTheSameFlight() async {
        let source = ScriptedSource(answers: [.failure(AcquisitionFailure(.rejected, "invalid_grant")), .success(token("c"))])
        let events = RecordingEvents()
        let identity = identity(source, events: events, initial: token("a"))
        let result = await withCheckedContinuation { continuation in
            identity.rejected(generation: 1) { continuation.resume(returning: $0) }
        }
        #expect(result == .success(IssuedToken(accessToken: "c", generation: 2)))
        #expect(source.requests.withLock { $0.map(\.0) } == [.refresh, .grant])
        #expect(events.kinds == [.failed, .acquired])
    }

    @Test func withoutCredentialsARefusedRefreshAnswersLoginRequiredAndClearsTheStore() async {
        let source = ScriptedSource(canGrant: false, answers: [.failure(AcquisitionFailure(.rejected, "invalid_grant"))])
        let events = RecordingEvents()
        let store = RecordingStore()
        let identity = identity(source, events: events, store: store, initial: token("a"))
        let result = await withCheckedContinuation { continuation in
            identity.rejected(generation: 1) { continuation.resume(returning: $0) }
        }
        guard case .failure(.loginRequired(let reason)) = result else {
            Issue.record("expected login required, got \(result)")
            return
        }
        #expect(reason.contains("invalid_grant"))
        #expect(events.kinds == [.failed, .loginRequired])
        #expect(await store.saved == [nil])
        // Later requests are answered at once, without another token request.
        #expect(await demand(identity) == .failure(.loginRequired(reason: reason)))
        #expect(source.requests.withLock { $0.count } == 1)
    }

    @Test func anUnreachableIdPFailsTheWaitersAndBacksOff() async {
        let source = ScriptedSource(answers: [.failure(AcquisitionFailure(.transient, "connection refused", retryAfter: .seconds(60)))])
        let identity = identity(source)
        guard case .failure(.failing(let reason, let retryAt)) = await demand(identity) else {
            Issue.record("expected a failing identity")
            return
        }
        #expect(reason == "connection refused")
        #expect(retryAt >= now.addingTimeInterval(60))
        _ = await demand(identity)
        #expect(source.requests.withLock { $0.count } == 1)
    }
}
