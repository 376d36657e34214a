import Foundation
import Testing
@testable import LatchkeyAuth

/// A token request while the identity's token is replaced under it: the winner's double
/// check under the refresh lock, and answers for a token that is no longer held.
extension TokenLifecycleTests {
    /// A lifecycle whose token is due and whose refresh was started at generation 1.
    func refreshing() -> TokenLifecycle {
        var machine = inUse(token("a"))
        #expect(machine.tick(now: at(70)) == .refresh)
        return machine
    }

    @Test func withNothingNewTheLockHolderMakesThePlannedRequest() {
        var machine = refreshing()
        let locked = machine.lockTaken(planned: .refresh, startedAt: 1, stored: token("a"), now: at(71))
        #expect(locked == TokenLifecycle.LockedRequest(kind: .refresh, tookStoredToken: false))
        #expect(machine.phase == .acquiring(.refresh))
        #expect(machine.lockTaken(planned: .refresh, startedAt: 1, stored: nil, now: at(71)).kind == .refresh)
    }

    @Test func aNewerStoredTokenIsTakenInsteadOfRequestingOne() {
        var machine = refreshing()
        let newer = token("b", at: 60)
        let locked = machine.lockTaken(planned: .refresh, startedAt: 1, stored: newer, now: at(71))
        #expect(locked == TokenLifecycle.LockedRequest(kind: nil, tookStoredToken: true))
        #expect(machine.token == newer)
        #expect(machine.generation == 2)
        #expect(machine.phase == .idle)
    }

    @Test func anOlderOrTheSameStoredTokenIsNotNewer() {
        let machine = lifecycle(token("a", at: 10))
        #expect(!machine.isNewer(token("a", at: 20)))
        #expect(!machine.isNewer(token("b", at: 5)))
        #expect(machine.isNewer(token("b", at: 11)))
        #expect(lifecycle().isNewer(token("b")))
    }

    @Test func aNewerStoredTokenPastItsUseCallsForItsOwnRefresh() {
        var machine = refreshing()
        // Obtained later, but already past its usable time at 200.
        let stale = token("b", at: 50, refresh: "r2")
        let locked = machine.lockTaken(planned: .grant, startedAt: 1, stored: stale, now: at(200))
        #expect(locked == TokenLifecycle.LockedRequest(kind: .refresh, tookStoredToken: true))
        #expect(machine.token?.refreshToken == "r2")
    }

    @Test func aTokenThatArrivedWhileWaitingForTheLockMakesTheRequestNeedless() {
        var machine = refreshing()
        machine.replace(with: token("login", at: 65))
        let locked = machine.lockTaken(planned: .refresh, startedAt: 1, stored: nil, now: at(71))
        #expect(locked == TokenLifecycle.LockedRequest(kind: nil, tookStoredToken: false))
    }

    @Test func anAnswerForAReplacedTokenIsNotCurrentAndItsFailureIsIgnored() {
        var machine = refreshing()
        #expect(machine.isCurrent(startedAt: 1))
        machine.replace(with: token("login", at: 72))
        #expect(!machine.isCurrent(startedAt: 1))
        let action = machine.failed(AcquisitionFailure(.rejected, "invalid_grant"), kind: .refresh, startedAt: 1, now: at(73), unit: 0)
        #expect(action == .ignored)
        #expect(machine.token?.accessToken == "login")
        #expect(machine.token?.refreshToken == "r")
        #expect(machine.lastFailure == nil)
    }

    @Test func aFailureSaysWhatFollows() {
        var transient = refreshing()
        #expect(transient.failed(AcquisitionFailure(.transient, "503"), kind: .refresh, startedAt: 1, now: at(71), unit: 0) == .wait)

        var reauthenticates = refreshing()
        #expect(reauthenticates.failed(AcquisitionFailure(.rejected, "invalid_grant"), kind: .refresh, startedAt: 1, now: at(71), unit: 0)
            == .retry(.grant))

        var loginOnly = lifecycle(token("a"), canGrant: false)
        loginOnly.used(at: at(0))
        _ = loginOnly.tick(now: at(70))
        #expect(loginOnly.failed(AcquisitionFailure(.rejected, "invalid_grant"), kind: .refresh, startedAt: 1, now: at(71), unit: 0)
            == .loginRequired(reason: "the refresh token was refused: invalid_grant"))

        var misconfigured = refreshing()
        let refused = AcquisitionFailure(.misconfigured(configKey: "client_secret"), "invalid_client")
        guard case .misconfigured(let record) = misconfigured.failed(refused, kind: .refresh, startedAt: 1, now: at(71), unit: 0) else {
            Issue.record("a refused configuration is kept for the status")
            return
        }
        #expect(record?.configKey == "client_secret")
    }
}
