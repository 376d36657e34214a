import Foundation
import LatchkeyConfig
import Testing
@testable import LatchkeyAuth

@Suite struct TokenLifecycleTests {
    let t0 = Date(timeIntervalSince1970: 2_000_000)
    let timing = TokenTiming(clockSkew: .seconds(10), refreshAhead: .seconds(20))

    func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    func token(_ value: String, at obtained: TimeInterval = 0, lifetime: TimeInterval = 100, refresh: String? = "r") -> TokenSet {
        TokenSet(accessToken: value, refreshToken: refresh, expiresAt: at(obtained + lifetime), obtainedAt: at(obtained))
    }

    func lifecycle(_ token: TokenSet? = nil, canGrant: Bool = true, keepWarm: Bool = false) -> TokenLifecycle {
        TokenLifecycle(token: token, timing: timing, backoff: Backoff(initial: .seconds(2), maximum: .seconds(60)), canGrant: canGrant,
                       keepWarm: keepWarm)
    }

    /// A lifecycle whose token a request used at the start.
    func inUse(_ token: TokenSet) -> TokenLifecycle {
        var machine = lifecycle(token)
        machine.used(at: at(0))
        return machine
    }

    @Test func firstDemandStartsOneGrantAndLaterDemandsWait() {
        var machine = lifecycle()
        #expect(machine.demand(now: at(0)) == .wait(start: .grant))
        #expect(machine.demand(now: at(0)) == .wait(start: nil))
        machine.succeeded(token("a"), kind: .grant)
        #expect(machine.demand(now: at(1)) == .ready(token("a"), generation: 1))
    }

    @Test func expiryWithTheSkewMarginLeadsToARefresh() {
        var machine = lifecycle(token("a"))
        #expect(machine.usable(now: at(89.9)) != nil)
        #expect(machine.usable(now: at(90)) == nil)
        #expect(machine.demand(now: at(90)) == .wait(start: .refresh))
    }

    @Test func proactiveRefreshIsDueAheadOfTheDeadlineAndOnlyOnce() {
        var machine = inUse(token("a"))
        #expect(machine.nextTick() == at(70))
        #expect(machine.tick(now: at(69)) == nil)
        #expect(machine.tick(now: at(70)) == .refresh)
        #expect(machine.tick(now: at(71)) == nil)
        // The old token is still served while the refresh runs.
        #expect(machine.demand(now: at(71)) == .ready(token("a"), generation: 1))
    }

    @Test func aRefreshAnswerWithoutARefreshTokenKeepsTheOldOne() {
        var machine = lifecycle(token("a", refresh: "r1"))
        _ = machine.demand(now: at(95))
        machine.succeeded(token("b", at: 95, refresh: nil), kind: .refresh)
        #expect(machine.token?.refreshToken == "r1")
        #expect(machine.generation == 2)
    }

    @Test func aRejectedTokenIsNeverHandedOutAgainButAnOldRejectionKeepsTheNewToken() {
        var machine = lifecycle(token("a"))
        #expect(machine.rejected(generation: 1, now: at(5)) == .wait(start: .refresh))
        machine.succeeded(token("b", at: 6), kind: .refresh)
        // A request that used "a" comes back with its 401 after "b" arrived.
        #expect(machine.rejected(generation: 1, now: at(7)) == .ready(token("b", at: 6), generation: 2))
    }

    @Test func aRefusedRefreshReauthenticatesWhenTheIdentityHasCredentials() {
        var machine = lifecycle(token("a"))
        _ = machine.demand(now: at(95))
        let next = machine.failed(AcquisitionFailure(.rejected, "invalid_grant"), kind: .refresh, now: at(95), unit: 0)
        #expect(next == .grant)
        #expect(machine.token?.refreshToken == nil)
        #expect(machine.phase == .acquiring(.grant))
    }

    @Test func aRefusedRefreshWithoutCredentialsRequiresLogin() {
        var machine = lifecycle(token("a"), canGrant: false)
        _ = machine.demand(now: at(95))
        #expect(machine.failed(AcquisitionFailure(.rejected, "invalid_grant"), kind: .refresh, now: at(95), unit: 0) == nil)
        #expect(machine.token == nil)
        guard case .unavailable(.loginRequired) = machine.demand(now: at(96)) else {
            Issue.record("expected login required")
            return
        }
    }

    @Test func transientFailuresBackOffExponentiallyAndKeepAValidToken() {
        var machine = inUse(token("a"))
        #expect(machine.tick(now: at(70)) == .refresh)
        #expect(machine.failed(AcquisitionFailure(.transient, "IdP answered 503"), kind: .refresh, now: at(70), unit: 0) == nil)
        #expect(machine.phase == .backingOff(until: at(71), reason: "IdP answered 503"))
        #expect(machine.demand(now: at(70.5)) == .ready(token("a"), generation: 1))
        #expect(machine.nextTick() == at(71))
        #expect(machine.tick(now: at(71)) == .refresh)
        _ = machine.failed(AcquisitionFailure(.transient, "down"), kind: .refresh, now: at(71), unit: 0)
        #expect(machine.nextTick() == at(73))
        _ = machine.tick(now: at(73))
        _ = machine.failed(AcquisitionFailure(.transient, "down"), kind: .refresh, now: at(73), unit: 0)
        #expect(machine.nextTick() == at(77))
    }

    @Test func withoutAUsableTokenABackOffAnswersAtOnceInsteadOfRetrying() {
        var machine = lifecycle()
        _ = machine.demand(now: at(0))
        _ = machine.failed(AcquisitionFailure(.transient, "refused", retryAfter: .seconds(30)), kind: .grant, now: at(0), unit: 0)
        #expect(machine.demand(now: at(1)) == .unavailable(.failing(reason: "refused", retryAt: at(30))))
        #expect(machine.demand(now: at(30)) == .wait(start: .grant))
    }

    @Test func successResetsTheBackOff() {
        var machine = lifecycle()
        _ = machine.demand(now: at(0))
        _ = machine.failed(AcquisitionFailure(.transient, "x"), kind: .grant, now: at(0), unit: 0)
        _ = machine.failed(AcquisitionFailure(.transient, "x"), kind: .grant, now: at(2), unit: 0)
        machine.used(at: at(2))
        machine.succeeded(token("a", at: 10), kind: .grant)
        #expect(machine.tick(now: at(80)) == .refresh)
        _ = machine.failed(AcquisitionFailure(.transient, "x"), kind: .refresh, now: at(80), unit: 0)
        #expect(machine.nextTick() == at(81))
    }

    @Test func withoutCredentialsOrTokenLoginIsRequiredFromTheStart() {
        var machine = lifecycle(canGrant: false)
        #expect(machine.demand(now: at(0)) == .unavailable(.loginRequired(reason: "no token yet")))
        machine.replace(with: token("a"))
        #expect(machine.demand(now: at(1)) == .ready(token("a"), generation: 1))
        machine.logOut(reason: "logged out")
        #expect(machine.demand(now: at(2)) == .unavailable(.loginRequired(reason: "logged out")))
    }

    @Test func aLogoutUntilLoginHoldsAnIdentityThatCouldGrantByItself() {
        var machine = lifecycle()
        machine.replace(with: token("a"))
        machine.logOut(reason: "logged out by hand", untilLogin: true)
        #expect(machine.demand(now: at(1)) == .unavailable(.loginRequired(reason: "logged out by hand")))
        #expect(machine.nextTick() == nil)
        machine.replace(with: token("b"))
        #expect(machine.demand(now: at(2)) == .ready(token("b"), generation: 3))
        // Without untilLogin, such an identity gets a token again by itself.
        machine.logOut(reason: "removed")
        #expect(machine.demand(now: at(3)) == .wait(start: .grant))
    }
}

/// RFC 6749 §5.2 errors that mean the configuration is wrong: answered at once, never
/// retried until the identity's secrets change.
extension TokenLifecycleTests {
    static let refusal = "the authorization server refused the request with invalid_client (HTTP 401)"
    static let misconfigured = AcquisitionFailure(.misconfigured(configKey: "identities.id.client_secret"), refusal)
    static let problem = Misconfiguration(reason: refusal, configKey: "identities.id.client_secret")

    @Test func aMisconfigurationIsAnsweredAtOnceAndNeverRetried() {
        var machine = lifecycle()
        #expect(machine.demand(now: at(0)) == .wait(start: .grant))
        #expect(machine.failed(Self.misconfigured, kind: .grant, now: at(0), unit: 0) == nil)
        #expect(machine.phase == .misconfigured(Self.problem))
        #expect(machine.lastFailure == FailureRecord(message: Self.refusal, configKey: "identities.id.client_secret", at: at(0)))
        // No back-off timer, and no token request however long requests keep coming.
        #expect(machine.nextTick() == nil)
        #expect(machine.tick(now: at(3600)) == nil)
        #expect(machine.demand(now: at(1)) == .unavailable(.misconfigured(Self.problem)))
        #expect(machine.demand(now: at(3600)) == .unavailable(.misconfigured(Self.problem)))
    }

    @Test func aHeldTokenStaysInUseWhileMisconfiguredAndAnUpstreamRefusalDoesNotRetry() {
        var machine = inUse(token("a"))
        #expect(machine.tick(now: at(70)) == .refresh)
        _ = machine.failed(Self.misconfigured, kind: .refresh, now: at(70), unit: 0)
        #expect(machine.demand(now: at(80)) == .ready(token("a"), generation: 1))
        #expect(machine.nextTick() == nil)
        // Past its usable time, or refused by an upstream: no token, and no request.
        #expect(machine.demand(now: at(90)) == .unavailable(.misconfigured(Self.problem)))
        #expect(machine.rejected(generation: 1, now: at(85)) == .unavailable(.misconfigured(Self.problem)))
    }

    @Test func changedSecretsEndTheMisconfigurationAndTheNextRequestTriesAgain() {
        var machine = lifecycle()
        _ = machine.demand(now: at(0))
        _ = machine.failed(Self.misconfigured, kind: .grant, now: at(0), unit: 0)
        #expect(machine.credentialsChanged() == true)
        #expect(machine.credentialsChanged() == false)
        #expect(machine.demand(now: at(5)) == .wait(start: .grant))
        machine.succeeded(token("a", at: 5), kind: .grant)
        #expect(machine.lastFailure == nil)
        #expect(machine.demand(now: at(6)) == .ready(token("a", at: 5), generation: 1))
    }

    @Test func changedSecretsLeaveABackOffAlone() {
        var machine = lifecycle()
        _ = machine.demand(now: at(0))
        _ = machine.failed(AcquisitionFailure(.transient, "IdP answered 503"), kind: .grant, now: at(0), unit: 0)
        #expect(machine.credentialsChanged() == false)
        #expect(machine.phase == .backingOff(until: at(1), reason: "IdP answered 503"))
        #expect(machine.lastFailure == FailureRecord(message: "IdP answered 503", at: at(0)))
    }

    @Test func aTokenFromElsewhereEndsTheMisconfiguration() {
        var machine = lifecycle()
        _ = machine.demand(now: at(0))
        _ = machine.failed(Self.misconfigured, kind: .grant, now: at(0), unit: 0)
        machine.replace(with: token("b", at: 1))
        #expect(machine.phase == .idle)
        #expect(machine.lastFailure == nil)
        #expect(machine.demand(now: at(2)) == .ready(token("b", at: 1), generation: 1))
    }
}

/// The background refresh runs only for an identity in use, or one that keeps warm.
extension TokenLifecycleTests {
    @Test func anIdentityNobodyUsedHasNoBackgroundRefresh() {
        var machine = lifecycle(token("a"))
        #expect(machine.nextTick() == nil)
        #expect(machine.tick(now: at(70)) == nil)
        // A request uses it: the refresh is due at its moment (here, at once).
        machine.used(at: at(75))
        #expect(machine.nextTick() == at(70))
        #expect(machine.tick(now: at(75)) == .refresh)
    }

    @Test func anIdentityIdleForATokenLifetimeStopsRefreshing() {
        var machine = inUse(token("a"))
        #expect(machine.tick(now: at(70)) == .refresh)
        machine.succeeded(token("b", at: 70), kind: .refresh)
        // A use within a lifetime (100) before b's refresh moment (140) would keep it going...
        var busy = machine
        busy.used(at: at(45))
        #expect(busy.nextTick() == at(140))
        // ...but the last use was at 0.
        #expect(machine.nextTick() == nil)
        #expect(machine.tick(now: at(140)) == nil)
    }

    @Test func aRequestAfterIdlenessRenewsOnDemand() {
        var machine = inUse(token("a"))
        _ = machine.tick(now: at(70))
        machine.succeeded(token("b", at: 70), kind: .refresh)
        // b was usable until 160; nothing renewed it since.
        machine.used(at: at(500))
        #expect(machine.demand(now: at(500)) == .wait(start: .refresh))
    }

    @Test func aTokenWithNothingToRenewItWithHasNoTimer() {
        var machine = lifecycle(token("a", refresh: nil), canGrant: false, keepWarm: true)
        machine.used(at: at(75))
        #expect(machine.nextTick() == nil)
        #expect(machine.tick(now: at(75)) == nil)
    }

    @Test func keepWarmRefreshesWithoutRequests() {
        var machine = lifecycle(token("a"), keepWarm: true)
        #expect(machine.nextTick() == at(70))
        #expect(machine.tick(now: at(70)) == .refresh)
        machine.succeeded(token("b", at: 70), kind: .refresh)
        #expect(machine.tick(now: at(140)) == .refresh)
        machine.succeeded(token("c", at: 140), kind: .refresh)
        #expect(machine.nextTick() == at(210))
    }
}
