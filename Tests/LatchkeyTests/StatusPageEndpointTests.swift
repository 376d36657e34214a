import Foundation
import LatchkeyAuth
import LatchkeyTestSupport
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct StatusPageEndpointTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func endpoint() throws -> StatusPageEndpoint {
        let identities = RouteIdentitiesFixture.identities()
        // A route that injects an identity, and one that injects a credential only.
        let config = try ConfigTestSupport.load("""
            credentials:
              key: { value: k }
            identities:
              alice: { grant: static, token: { value: a } }
            routes:
              - { name: kii, path: /kii, upstream: "https://kii.example", inject: [{ header: Authorization, identity: alice }] }
              - { name: plain, path: /plain, upstream: "https://plain.example", inject: [{ header: X-Key, credential: key }] }
            """)
        let report = IdentitiesEndpoint(config: config, identities: identities, selectable: RouteIdentitiesFixture.table(identities).selectable)
        let recorder = AuthEventRecorder(clock: { Date(timeIntervalSince1970: 1_800_000_000) })
        recorder.record(AuthEvent(identity: "alice", kind: .acquired))
        return StatusPageEndpoint(identities: report, routes: config.routes, events: recorder, startedAt: now.addingTimeInterval(-60))
    }

    @Test func getAndHeadAnswerThePageWithItsSecurityFields() throws {
        let endpoint = try endpoint()
        for method in ["GET", "HEAD"] {
            let response = endpoint.response(method: method, path: "/.latchkey/", now: now)
            #expect(response.status == 200)
            #expect(response.fields["Content-Type"] == "text/html; charset=utf-8")
            #expect(response.fields["Cache-Control"] == "no-store")
            #expect(response.fields["Content-Security-Policy"]?.hasPrefix("default-src 'none'; style-src 'sha256-") == true)
            #expect(response.fields["X-Frame-Options"] == "DENY")
            #expect(response.fields["Referrer-Policy"] == "no-referrer")
            #expect(String(decoding: response.body, as: UTF8.self) == endpoint.page(now: now).html)
        }
        let page = endpoint.page(now: now)
        #expect(page.identities.map(\.status.name) == ["alice"])
        #expect(page.routes.map(\.name) == ["kii", "plain"])
        #expect(page.routes.map(\.identity?.identity) == ["alice", nil])
        #expect(page.events.map(\.event) == [AuthEvent(identity: "alice", kind: .acquired)])
    }

    @Test func otherMethodsGet405WithAllow() throws {
        for path: Substring in ["/.latchkey/", "/.latchkey"] {
            let refused = try endpoint().response(method: "POST", path: path, now: now)
            #expect(refused.status == 405)
            #expect(refused.fields["Allow"] == "GET, HEAD")
            #expect(String(decoding: refused.body, as: UTF8.self).contains(#""error":"method_not_allowed""#))
        }
    }

    @Test func thePathWithoutItsSlashIsRedirected() throws {
        let moved = try endpoint().response(method: "GET", path: "/.latchkey", now: now)
        #expect(moved.status == 308)
        #expect(moved.fields["Location"] == "/.latchkey/")
        #expect(moved.body.isEmpty)
    }

    @Test func servesItsPathsOnly() {
        #expect(StatusPageEndpoint.serves(path: "/.latchkey/"))
        #expect(StatusPageEndpoint.serves(path: "/.latchkey"))
        #expect(!StatusPageEndpoint.serves(path: "/.latchkey/metrics"))
        #expect(!StatusPageEndpoint.serves(path: "/.latchkeys"))
        #expect(!StatusPageEndpoint.serves(path: "/"))
    }
}
