import Foundation
import LatchkeyAuth
import LatchkeyTestSupport
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct IdentitiesEndpointTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let config = IdentityConfig(name: "web", grant: .authorizationCode(.init()), tokenURL: "https://idp.example/token")

    func lifecycle(_ token: TokenSet? = nil, canGrant: Bool = false) -> TokenLifecycle {
        TokenLifecycle(token: token, timing: TokenTiming(clockSkew: .zero, refreshAhead: .zero), backoff: Backoff(), canGrant: canGrant)
    }

    func token(expiresIn seconds: TimeInterval) -> TokenSet {
        TokenSet(accessToken: "a", refreshToken: "r", expiresAt: now.addingTimeInterval(seconds), obtainedAt: now.addingTimeInterval(-60))
    }

    func live(_ lifecycle: TokenLifecycle) -> IdentityStatus {
        IdentityStatus(config, live: lifecycle, source: .store, now: now)
    }

    @Test func theLivePhaseShowsWhatTheStoreCannot() {
        #expect(live(lifecycle(token(expiresIn: 60))).state == .valid)

        var refreshing = lifecycle(token(expiresIn: -1))
        _ = refreshing.demand(now: now)
        #expect(live(refreshing) == IdentityStatus(name: "web", grant: "authorization_code", source: .store, state: .refreshing,
                                                   expiresAt: now.addingTimeInterval(-1), obtainedAt: now.addingTimeInterval(-60),
                                                   hasRefreshToken: true, detail: "renewing with its refresh token"))

        var failing = refreshing
        _ = failing.failed(AcquisitionFailure(.transient, "connection refused"), kind: .refresh, now: now, unit: 0)
        let status = live(failing)
        #expect(status.state == .failing)
        #expect(status.detail == "connection refused; next attempt at 2027-01-15T08:00:00Z")

        var refused = refreshing
        _ = refused.failed(AcquisitionFailure(.rejected, "invalid_grant"), kind: .refresh, now: now, unit: 0)
        #expect(live(refused).state == .loginRequired)
        #expect(live(refused).detail == "the refresh token was refused: invalid_grant")

        #expect(live(lifecycle()).state == .loginRequired)
        #expect(live(lifecycle(canGrant: true)).state == .noToken)
        #expect(live(lifecycle(token(expiresIn: -1))).state == .expired)
    }

    @Test func aMisconfigurationAndTheLastFailureAreLive() throws {
        var machine = lifecycle(token(expiresIn: -1))
        _ = machine.demand(now: now)
        _ = machine.failed(AcquisitionFailure(.transient, "connection refused"), kind: .refresh, now: now, unit: 0)
        #expect(live(machine).lastError == FailureRecord(message: "connection refused", at: now))

        _ = machine.demand(now: now.addingTimeInterval(5))
        let refusal = "the authorization server refused the request with invalid_scope (HTTP 400)"
        _ = machine.failed(AcquisitionFailure(.misconfigured(configKey: "identities.web.scope"), refusal), kind: .refresh,
                           now: now.addingTimeInterval(5), unit: 0)
        let status = live(machine)
        #expect(status.state == .misconfigured)
        #expect(status.detail == refusal + "; fix identities.web.scope")
        #expect(status.lastError == FailureRecord(message: refusal, configKey: "identities.web.scope", at: now.addingTimeInterval(5)))
        let report = StatusReport(identities: [status], routes: [])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        let identity = try #require((json["identities"] as? [[String: Any]])?.first)
        #expect(identity["state"] as? String == "misconfigured")
        #expect(identity["last_error"] as? [String: String] == ["message": refusal, "config_key": "identities.web.scope", "at": "2027-01-15T08:00:05Z"])
    }

    @Test func aSeededRefreshTokenIsNotAToken() {
        let seed = TokenSet(accessToken: "", refreshToken: "seed", expiresAt: .distantPast, obtainedAt: .distantPast)
        let status = live(lifecycle(seed))
        #expect(status.state == .noToken)
        #expect(status.expiresAt == nil && status.obtainedAt == nil && status.hasRefreshToken)
    }

    @Test func theEndpointAnswersTheReportToGetAndHeadOnly() throws {
        let identities = RouteIdentitiesFixture.identities()
        let table = RouteIdentitiesFixture.table(identities)
        #expect(table.selectable["kii"]?.use("bob") == true)
        let config = try ConfigTestSupport.load("""
            identities:
              alice: { grant: static, token: { value: a } }
              bob: { grant: static, token: { value: b } }
              carol: { grant: static, token: { value: c } }
            routes:
              - name: kii
                upstream: https://kii.example
                inject: [{ header: Authorization, identity: alice }]
                selectable_identities: [bob]
            """)
        let endpoint = IdentitiesEndpoint(config: config, identities: identities, selectable: table.selectable)
        let report = endpoint.report(now: now)
        #expect(report.identities.map(\.name) == ["alice", "bob", "carol"])
        // The fixture's identities cannot get a token by themselves.
        #expect(report.identities.allSatisfy { $0.source == .static && $0.state == .loginRequired })
        #expect(report.routes == [RouteStatus(name: "kii", identity: "bob", configured: "alice", allowed: ["alice", "bob"])])

        let response = endpoint.response(method: "GET", now: now)
        #expect(response.status == 200)
        #expect(response.fields["Content-Type"] == "application/json")
        #expect(response.fields["Cache-Control"] == "no-store")
        #expect(String(decoding: response.body, as: UTF8.self) == report.json)
        let refused = endpoint.response(method: "DELETE", now: now)
        #expect(refused.status == 405)
        #expect(refused.fields["Allow"] == "GET, HEAD")
        #expect(IdentitiesEndpoint.serves(path: "/.latchkey/identities"))
        #expect(!IdentitiesEndpoint.serves(path: "/.latchkey/identities/alice"))
    }
}
