#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig
import LatchkeyUpstream
import Synchronization

/// An access token as a request uses it: the value and the generation, to report a
/// rejection of exactly this token.
public struct IssuedToken: Sendable, Equatable {
    public var accessToken: String
    public var generation: UInt64
    /// A recipe identity's captures, which routes inject by name (`{session_id}`).
    public var captures: [String: String] = [:]
}

/// One identity at run time: its lifecycle behind a lock, the requests waiting for a
/// token, the one token request in flight and the timer for the next proactive refresh.
///
/// The hot path calls `current()` (one lock round trip, which also records the use that
/// keeps the background refresh going). Only when that has nothing does a
/// request call `demand` and wait; the waiter is called exactly once, on whatever thread
/// finishes the token request, so a caller on an event loop hops back to its loop.
public final class Identity: Sendable {
    public typealias Waiter = @Sendable (Result<IssuedToken, IdentityUnavailable>) -> Void
    /// Waits until the `clock`'s time reaches a moment; throws when cancelled.
    public typealias Sleep = @Sendable (_ until: Date) async throws -> Void

    public let name: String
    /// The upstream's cookies that the proxy keeps for this identity (`jar: proxy`), shared
    /// by every client and kept in the store beside the token; nil for identities without.
    public let cookieJar: CookieJar?
    private let source: any TokenSource
    private let store: any TokenStore
    private let events: any AuthEventSink
    private let clock: @Sendable () -> Date
    private let sleep: Sleep
    private let random: @Sendable () -> Double
    private let state: Mutex<State>
    /// Token requests, the start's restore and cookie saves: cancelled by `shutDown`.
    private let tasks = OwnedTasks()

    private struct State: ~Copyable {
        var lifecycle: TokenLifecycle
        /// `start` has not read the store yet: requests wait instead of starting a token
        /// request that the stored token would make needless.
        var restoring: Bool
        var waiters: [Waiter] = []
        var timer: Task<Void, Never>?
        var timerDeadline: Date?
        /// A save of the jar is under way; `cookiesDirty`: the jar changed again since it
        /// began, so another save follows.
        var savingCookies = false
        var cookiesDirty = false
        /// `stop` was called: no timer, and every request is answered at once.
        var stopped: IdentityUnavailable?
    }

    /// `waitsForStart`: requests wait until `start` has restored the stored token (a
    /// server accepts requests before the store is read). `keepWarm`: refresh in the
    /// background even while no request uses the identity. `clock` and `sleep` are the
    /// time the lifecycle and its refresh timer go by: tests advance their own.
    public init(
        name: String, source: any TokenSource, store: any TokenStore, events: any AuthEventSink,
        initialToken: TokenSet? = nil, waitsForStart: Bool = false, cookieJar: CookieJar? = nil,
        timing: TokenTiming = .init(), backoff: Backoff = .init(), keepWarm: Bool = false,
        clock: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping Sleep = Identity.sleepOnSystemClock,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.name = name
        self.cookieJar = cookieJar
        self.source = source
        self.store = store
        self.events = events
        self.clock = clock
        self.sleep = sleep
        self.random = random
        state = Mutex(State(lifecycle: TokenLifecycle(token: initialToken, timing: timing, backoff: backoff, canGrant: source.canGrant,
                                                      keepWarm: keepWarm),
                            restoring: waitsForStart))
    }

    /// The default `sleep`: the system's wall clock, which the default `clock` reads.
    public static let sleepOnSystemClock: Sleep = { deadline in
        try await Task.sleep(for: .seconds(max(0, deadline.timeIntervalSinceNow)))
    }

    /// Whether `start` has read the store (always true for an identity that keeps nothing
    /// there): until then its requests wait.
    public var hasStarted: Bool { !state.withLock { $0.restoring } }

    /// Whether a token an upstream refused is worth replacing (and the request replaying).
    public var renewable: Bool { source.renewable }

    /// The token to attach now, or nil when a request must `demand` one (also while `start`
    /// restores what the store keeps: the stored token, or the cookie jar that must go with
    /// the first request).
    public func current() -> IssuedToken? {
        let now = clock()
        // Only the access token leaves the lock: this runs on every request.
        let (issued, wakes) = state.withLock { state -> (IssuedToken?, Bool) in
            guard !state.restoring, let (token, generation) = state.lifecycle.usable(now: now) else { return (nil, false) }
            state.lifecycle.used(at: now)
            // No timer while the identity was idle: this use may call for a refresh again.
            let wakes = state.timerDeadline == nil && state.lifecycle.nextTick() != nil
            return (IssuedToken(accessToken: token.accessToken, generation: generation, captures: token.captures), wakes)
        }
        if wakes { reschedule() }
        return issued
    }

    /// Calls `waiter` with a token as soon as there is one, starting the token request if
    /// none is in flight; at once (on this thread) when the answer is already known.
    public func demand(_ waiter: @escaping Waiter) {
        let now = clock()
        settle(waiter) { lifecycle in
            lifecycle.used(at: now)
            return lifecycle.demand(now: now)
        }
    }

    /// An upstream refused the token of `generation`: `waiter` gets its replacement.
    public func rejected(generation: UInt64, _ waiter: @escaping Waiter) {
        let now = clock()
        settle(waiter) { $0.rejected(generation: generation, now: now) }
    }

    /// Why requests get `login_required` after `latchkey logout`.
    static let loggedOutReason = "logged out with `latchkey logout`"

    /// Loads the stored token and cookie jar, if any, answers the requests that waited for
    /// them, then acquires a token at once when `eagerly`. An identity a person logged out
    /// stays out.
    public func start(eagerly: Bool) async {
        do {
            if let stored = try await store.load(identity: name) {
                update { $0.replace(with: stored) }
            } else if try await store.isLoggedOut(identity: name) {
                holdLoggedOut()
            }
        } catch {
            events.record(AuthEvent(identity: name, kind: .failed, detail: "cannot load the stored token: \(error)"))
        }
        if let cookieJar {
            do {
                cookieJar.restore(try await store.loadCookies(identity: name))
            } catch {
                events.record(AuthEvent(identity: name, kind: .failed, detail: "cannot load the stored cookies: \(error)"))
            }
        }
        await checkRestoredToken()
        state.withLock { $0.restoring = false }
        flushWaiters()
        // Not a use: an identity acquired eagerly and never used does not stay warm.
        if eagerly {
            let now = clock()
            settle({ _ in }) { $0.demand(now: now) }
        }
        reschedule()
    }

    /// Asks the server about a restored token that is still within its lifetime, while
    /// requests wait for the start: one the server no longer accepts (revoked, or signed
    /// with a rotated key) is renewed before any request carries it. A server that cannot
    /// answer leaves the token in use; an upstream's 401 would still renew it.
    private func checkRestoredToken() async {
        guard let (token, generation) = state.withLock({ $0.lifecycle.usable(now: clock()) }) else { return }
        do throws(AcquisitionFailure) {
            guard try await source.check(token, now: clock()) == .invalid else { return }
            events.record(AuthEvent(identity: name, kind: .failed, detail: "the stored token is no longer accepted; renewing it"))
            // Straight to the lifecycle: `rejected(generation:_:)` would only queue behind the
            // start this is part of.
            let now = clock()
            if case .wait(let start?) = update({ $0.rejected(generation: generation, now: now) }) { acquire(start) }
        } catch {
            events.record(AuthEvent(identity: name, kind: .failed, detail: "cannot check the stored token, using it: \(error.message)"))
        }
    }

    /// `start` as a task the identity owns (`shutDown` cancels it).
    public func startInBackground(eagerly: Bool) {
        tasks.run { [self] in await start(eagerly: eagerly) }
    }

    /// A person logged in (`latchkey login`): use `token` from now on.
    public func loggedIn(_ token: TokenSet) async throws {
        try await store.save(token, identity: name)
        update { $0.replace(with: token) }
        flushWaiters()
        reschedule()
        events.record(AuthEvent(identity: name, kind: .acquired))
    }

    /// Some of the identity's secrets (or files it reads at each token request) changed: a
    /// token endpoint that refused its configuration is asked again, by the next request or
    /// the background refresh.
    public func credentialsChanged() {
        guard update({ $0.credentialsChanged() }) else { return }
        reschedule()
    }

    /// The store holds something else now, put there by another process (`latchkey login`
    /// or `logout` beside this server): take it as it is, without writing it back; the
    /// waiting requests get the new token and the refresh timer follows it.
    public func storeChanged(_ change: StoreChange) {
        let event: AuthEvent
        switch change {
        case .stored(let token):
            let taken = state.withLock { state -> Bool in
                guard state.lifecycle.token != token else { return false }
                state.lifecycle.replace(with: token)
                return true
            }
            guard taken else { return }
            event = AuthEvent(identity: name, kind: .acquired, detail: "taken from the token store")
        case .removed:
            // A logout elsewhere ends the web session too.
            cookieJar?.clear()
            let dropped = state.withLock { state -> Bool in
                guard state.lifecycle.token != nil else { return false }
                state.lifecycle.logOut(reason: "logged out")
                return true
            }
            guard dropped else { return }
            event = AuthEvent(identity: name, kind: .loggedOut, detail: "removed from the token store")
        case .loggedOut:
            guard holdLoggedOut() else { return }
            event = Self.loggedOutEvent(name)
        case .unreadable(let reason):
            events.record(AuthEvent(identity: name, kind: .failed, detail: "the token store changed but cannot be read: \(reason)"))
            return
        }
        flushWaiters()
        reschedule()
        events.record(event)
    }

    /// The jar changed (an upstream or a handoff endpoint set a cookie): keep it in the
    /// store. One save at a time; changes made during a save are saved after it.
    public func cookiesChanged() {
        guard cookieJar != nil else { return }
        let first = state.withLock { state -> Bool in
            guard !state.savingCookies else {
                state.cookiesDirty = true
                return false
            }
            state.savingCookies = true
            return true
        }
        guard first else { return }
        tasks.run { [self] in await saveCookies() }
    }

    private func saveCookies() async {
        guard let cookieJar else { return }
        repeat {
            do {
                try await store.saveCookies(cookieJar.lines(), identity: name)
            } catch {
                events.record(AuthEvent(identity: name, kind: .failed, detail: "cannot keep the cookie jar in the token store: \(error)"))
            }
        } while state.withLock { state -> Bool in
            guard state.cookiesDirty else {
                state.savingCookies = false
                return false
            }
            state.cookiesDirty = false
            return true
        }
    }

    /// The lifecycle as it is now, for status reports.
    public var snapshot: TokenLifecycle { state.withLock { $0.lifecycle } }

    /// Counts the tokens the identity has held: when it has not moved, `heldSecrets` has not
    /// changed either. One lock round trip, for log redaction, which asks at every line.
    public var tokenGeneration: UInt64 { state.withLock { $0.lifecycle.generation } }

    /// The values of the token held now that logs must mask (`TokenSource.secretValues`:
    /// a recipe's secret captures), with the token's generation.
    public var heldSecrets: (generation: UInt64, values: [String]) {
        let (generation, token) = state.withLock { ($0.lifecycle.generation, $0.lifecycle.token) }
        return (generation, token.map(source.secretValues) ?? [])
    }

    /// The configuration no longer runs this identity as it is (a reload removed or changed
    /// it): the refresh timer ends, and the requests waiting for a token, and any that ask
    /// later, get `reason`. A token request in flight finishes and is stored, for the
    /// identity that replaces this one.
    public func stop(reason: IdentityUnavailable) {
        let waiters = state.withLock { state -> [Waiter] in
            state.stopped = reason
            state.timer?.cancel()
            state.timer = nil
            state.timerDeadline = nil
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter(.failure(reason)) }
    }

    /// Why requests get an error once the process is stopping.
    public static let shutDownReason = IdentityUnavailable.failing(reason: "latchkey is shutting down", retryAt: .distantFuture)

    /// The process is stopping: as `stop`, and every task the identity started (its
    /// restore, token requests, cookie saves) is cancelled; none starts after this.
    public func shutDown() {
        stop(reason: Self.shutDownReason)
        tasks.cancelAll()
    }

    /// Tasks the identity started that are still running (for tests).
    var runningTasks: Int { tasks.count }

    // MARK: the token request

    private func settle(_ waiter: @escaping Waiter, _ decide: (inout TokenLifecycle) -> TokenLifecycle.Demand) {
        let decision = state.withLock { state -> TokenLifecycle.Demand in
            if let stopped = state.stopped { return .unavailable(stopped) }
            if state.restoring {
                state.waiters.append(waiter)
                return .wait(start: nil)
            }
            let decision = decide(&state.lifecycle)
            if case .wait = decision { state.waiters.append(waiter) }
            return decision
        }
        if case .wait(let start?) = decision { acquire(start) } else { Self.answer(waiter, decision) }
    }

    /// Calls `waiter` with a known answer; a `.wait` has none and is left alone.
    private static func answer(_ waiter: Waiter, _ decision: TokenLifecycle.Demand) {
        switch decision {
        case .ready(let token, let generation): waiter(.success(IssuedToken(accessToken: token.accessToken, generation: generation, captures: token.captures)))
        case .unavailable(let reason): waiter(.failure(reason))
        case .wait: break
        }
    }

    private func acquire(_ kind: AcquisitionKind) {
        tasks.run { [self] in await run(kind) }
    }

    /// Token requests one after the other, each under the store's refresh lock, until one
    /// settles the lifecycle (a token, a back-off, a login required).
    private func run(_ first: AcquisitionKind) async {
        var next: AcquisitionKind? = first
        while let kind = next {
            let generation = state.withLock { $0.lifecycle.generation }
            let lease = await takeRefreshLock()
            next = await attempt(kind, startedAt: generation)
            if let lease { await store.releaseRefreshLock(lease) }
        }
        flushWaiters()
        reschedule()
    }

    /// One token request, under the refresh lock, after the double check. Returns the
    /// request to make next (a re-authentication after a refused refresh), if any.
    private func attempt(_ planned: AcquisitionKind, startedAt heldGeneration: UInt64) async -> AcquisitionKind? {
        // The winner's double check: another process may have stored a newer token
        // meanwhile, a login or another replica's refresh, whose refresh token may have
        // replaced ours; or the watcher brought one while this waited for the lock.
        let stored: TokenSet?
        switch await storedNow() {
        case .token(let token):
            stored = token
        case .loggedOut:
            // Logged out by another process before the watcher told this one: its refresh
            // token is revoked, and a new grant would undo the logout. `latchkey logout`
            // marks the store under this same lock, so no request of this identity is out
            // while it does, and none starts after it without seeing the mark here.
            if holdLoggedOut() { events.record(Self.loggedOutEvent(name)) }
            return nil
        }
        let now = clock()
        let locked = update { $0.lockTaken(planned: planned, startedAt: heldGeneration, stored: stored, now: now) }
        if locked.tookStoredToken { events.record(AuthEvent(identity: name, kind: .acquired, detail: "a newer token was in the token store")) }
        guard let kind = locked.kind else { return nil }
        let (refreshToken, generation) = state.withLock { ($0.lifecycle.token?.refreshToken, $0.lifecycle.generation) }
        do throws(AcquisitionFailure) {
            let answer = try await source.acquire(kind, refreshToken: kind == .refresh ? refreshToken : nil, now: clock())
            let completed = state.withLock { state in
                state.lifecycle.isCurrent(startedAt: generation) ? state.lifecycle.completed(answer, kind: kind) : nil
            }
            guard let token = completed else { return nil }
            await persist(token)
            update { $0.succeeded(token, kind: kind) }
            events.record(AuthEvent(identity: name, kind: kind == .refresh ? .refreshed : .acquired))
            return nil
        } catch {
            let now = clock(), unit = random()
            let action = update { $0.failed(error, kind: kind, startedAt: generation, now: now, unit: unit) }
            if action == .ignored { return nil }
            events.record(AuthEvent(identity: name, kind: .failed, detail: error.misconfiguration?.description ?? error.message))
            switch action {
            case .retry(let next):
                return next
            case .loginRequired(let reason):
                events.record(AuthEvent(identity: name, kind: .loginRequired, detail: reason))
                await persist(nil)
            case .misconfigured(let failure):
                // Kept where `latchkey status` reads, until a token is saved.
                await keep(failure)
            case .wait, .ignored:
                break
            }
            return nil
        }
    }

    /// Waits for the store's refresh lock (`TokenStore.waitForRefreshLock`). A store that
    /// cannot be reached gives no lease, and the request goes ahead without one: requests
    /// must not go without a token while the store is away.
    private func takeRefreshLock() async -> RefreshLease? {
        do {
            return try await store.waitForRefreshLock(identity: name)
        } catch {
            events.record(AuthEvent(identity: name, kind: .failed, detail: "cannot take the refresh lock, going on without it: \(error)"))
            return nil
        }
    }

    /// What the store holds now, as it bears on a token request about to start.
    private enum StoredNow {
        /// Its token (nil: none, or the store cannot be read); the lifecycle decides
        /// whether it is newer than the one held.
        case token(TokenSet?)
        /// A person logged the identity out.
        case loggedOut
    }

    private func storedNow() async -> StoredNow {
        do {
            let stored = try await store.load(identity: name)
            if stored == nil, try await store.isLoggedOut(identity: name) { return .loggedOut }
            return .token(stored)
        } catch {
            events.record(AuthEvent(identity: name, kind: .failed, detail: "cannot load the stored token: \(error)"))
            return .token(nil)
        }
    }

    /// Puts the identity in the state `latchkey logout` leaves it in: no token, an empty
    /// cookie jar (the store's mark keeps none), and requests answered `login_required`
    /// until a login. False when it was there already.
    @discardableResult
    private func holdLoggedOut() -> Bool {
        // A logout ends the web session too, whatever the token's state was.
        cookieJar?.clear()
        return state.withLock { state in
            guard state.lifecycle.phase != .loginRequired(reason: Self.loggedOutReason) else { return false }
            state.lifecycle.logOut(reason: Self.loggedOutReason, untilLogin: true)
            return true
        }
    }

    private static func loggedOutEvent(_ name: String) -> AuthEvent {
        AuthEvent(identity: name, kind: .loggedOut, detail: loggedOutReason)
    }

    /// Saves before the token is handed out: a rotated refresh token must be on disk before
    /// anything can use (and so invalidate) it. A store that fails is reported, and the
    /// token is still used: losing it on restart beats failing every request now.
    private func persist(_ token: TokenSet?) async {
        do {
            try await store.save(token, identity: name)
        } catch {
            events.record(AuthEvent(identity: name, kind: .failed, detail: "cannot store the token: \(error)"))
        }
    }

    private func keep(_ failure: FailureRecord?) async {
        do {
            try await store.saveFailure(failure, identity: name)
        } catch {
            events.record(AuthEvent(identity: name, kind: .failed, detail: "cannot keep the failure in the token store: \(error)"))
        }
    }

    /// Answers every waiter from the lifecycle as it is now.
    private func flushWaiters() {
        let now = clock()
        let answered = state.withLock { state -> [(Waiter, TokenLifecycle.Demand)] in
            if state.restoring { return [] }
            let waiters = state.waiters
            state.waiters.removeAll()
            return waiters.map { ($0, state.lifecycle.demand(now: now)) }
        }
        for (waiter, decision) in answered {
            guard case .wait(let start) = decision else {
                Self.answer(waiter, decision)
                continue
            }
            // Only possible if the token expired between the request and now: wait for the
            // next one like any other request.
            state.withLock { $0.waiters.append(waiter) }
            if let start { acquire(start) }
        }
    }

    @discardableResult
    private func update<T>(_ change: (inout TokenLifecycle) -> T) -> T {
        state.withLock { change(&$0.lifecycle) }
    }

    // MARK: the timer

    /// Arms the one timer for the lifecycle's next tick (proactive refresh or end of a
    /// back-off), replacing a timer armed for another moment.
    private func reschedule() {
        state.withLock { state in
            let deadline = state.stopped == nil ? state.lifecycle.nextTick() : nil
            guard deadline != state.timerDeadline else { return }
            state.timer?.cancel()
            state.timerDeadline = deadline
            guard let deadline else {
                state.timer = nil
                return
            }
            // Holds the identity until it fires or `stop` cancels it (the registry stops
            // every identity it lets go). Not `[weak self]`: a weak reference gives the
            // identity a side table, and every retain and release of it on the request
            // path took the slow path, some 1,100 instructions per request.
            state.timer = Task { [self, sleep] in
                // On the identity's clock: tests move it on instead of waiting.
                guard (try? await sleep(deadline)) != nil, !Task.isCancelled else { return }
                tick()
            }
        }
    }

    private func tick() {
        let now = clock()
        let kind = state.withLock { state -> AcquisitionKind? in
            state.timerDeadline = nil
            return state.lifecycle.tick(now: now)
        }
        if let kind { acquire(kind) } else { reschedule() }
    }
}
