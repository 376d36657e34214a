import Foundation
import LatchkeyAuth
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct StatusPageTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let accessToken = "at-0123456789-secret"
    let refreshToken = "rt-9876543210-secret"

    /// `web` with a token that expires in 58 minutes, `down` whose IdP fails, and a route
    /// and an event whose texts try to break out of the page.
    func page(events: [RecordedAuthEvent] = []) -> StatusPage {
        let web = IdentityConfig(name: "web", grant: .authorizationCode(.init()), tokenURL: "https://idp.example/token")
        let timing = TokenTiming(clockSkew: .zero, refreshAhead: .zero)
        let token = TokenSet(accessToken: accessToken, refreshToken: refreshToken, expiresAt: now.addingTimeInterval(58 * 60),
                             obtainedAt: now.addingTimeInterval(-180))
        var failing = TokenLifecycle(token: nil, timing: timing, backoff: Backoff(), canGrant: true)
        _ = failing.demand(now: now)
        _ = failing.failed(AcquisitionFailure(.transient, "<script>alert(1)</script>"), kind: .grant, now: now, unit: 0)
        let report = StatusReport(
            identities: [
                IdentityStatus(web, live: TokenLifecycle(token: token, timing: timing, backoff: Backoff(), canGrant: false),
                               source: .store, now: now),
                IdentityStatus(IdentityConfig(name: "down", grant: .clientCredentials, tokenURL: "https://idp.example/token"),
                               live: failing, source: .store, now: now),
            ],
            routes: [RouteStatus(name: "<script>route</script>", identity: "web", configured: "web", allowed: ["web"])])
        let routes = [
            RouteConfig(name: "<script>route</script>", pathPrefix: "/api", upstream: UpstreamConfig(url: "https://api.example:8443/v1")),
            RouteConfig(name: "plain", pathPrefix: "/plain", upstream: UpstreamConfig(url: "http://plain.example")),
        ]
        var ring = AuthEventRing(capacity: 10)
        for event in events { ring.append(event) }
        return StatusPage(report: report, routes: routes, events: ring, startedAt: now.addingTimeInterval(-3 * 3600), now: now)
    }

    func event(_ seconds: TimeInterval, _ identity: String, _ kind: AuthEvent.Kind, _ detail: String? = nil) -> RecordedAuthEvent {
        RecordedAuthEvent(at: now.addingTimeInterval(seconds), event: AuthEvent(identity: identity, kind: kind, detail: detail))
    }

    @Test func showsStatesExpiryRoutesAndEventsNewestFirst() throws {
        let html = page(events: [event(-180, "web", .acquired), event(-60, "down", .failed, "connection refused")]).html
        #expect(html.contains(#"<span class="badge good">valid</span>"#))
        #expect(html.contains(#"<span class="badge bad">failing</span>"#))
        #expect(html.contains(#"<time datetime="2027-01-15T08:58:00Z">2027-01-15T08:58:00Z</time> <span class="rel">in 58m</span>"#))
        #expect(html.contains(#"<span class="rel">3m ago</span>"#))
        #expect(html.contains("started <time datetime=\"2027-01-15T05:00:00Z\">"))
        #expect(html.contains("https://api.example:8443") && !html.contains("/v1"))
        #expect(html.contains(#"<td data-label="Path"><code>/plain</code></td><td data-label="Upstream">http://plain.example</td><td data-label="Identity">–</td>"#))
        let failed = try #require(html.range(of: #"<span class="badge bad">failed</span>"#))
        let acquired = try #require(html.range(of: #"<span class="badge good">acquired</span>"#))
        #expect(failed.lowerBound < acquired.lowerBound)
        #expect(html.contains(#"<meta http-equiv="refresh" content="5">"#))
    }

    @Test func anIdentitysLastErrorIsItsOwnFailedTokenRequest() {
        let shown = page(events: [event(-60, "down", .failed, "an older failure the recorder saw")])
        #expect(shown.identities[1].lastError == FailureRecord(message: "<script>alert(1)</script>", at: now))
    }

    @Test func otherwiseTheLastFailedEventSinceItsLastToken() {
        // web's token was obtained 3 minutes ago: a failure before it is over.
        let before = page(events: [event(-240, "web", .failed, "cannot load the stored token")])
        #expect(before.identities[0].lastError == nil)
        let after = page(events: [event(-120, "web", .failed, "first"), event(-60, "web", .failed, "cannot store the token")])
        #expect(after.identities[0].lastError == FailureRecord(message: "cannot store the token", at: now.addingTimeInterval(-60)))
        #expect(after.html.contains(#"<dt>Last error</dt><dd><span class="error">cannot store the token</span><br>"#))
    }

    @Test func escapesEveryConfiguredAndReportedString() {
        let html = page(events: [event(0, "web", .failed, #"<img src=x onerror="alert(2)">"#)]).html
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        #expect(html.contains("&lt;script&gt;route&lt;/script&gt;"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;; next attempt at"))
        #expect(html.contains("&lt;img src=x onerror=&quot;alert(2)&quot;&gt;"))
    }

    @Test func neverShowsATokenOfTheLifecycle() {
        let html = page(events: [event(0, "web", .refreshed)]).html
        #expect(!html.contains(accessToken))
        #expect(!html.contains(refreshToken))
    }

    @Test func thePolicyAdmitsExactlyThePagesStylesheet() throws {
        let html = page().html
        let style = try #require(html.firstRange(of: "<style>").flatMap { open in
            html[open.upperBound...].firstRange(of: "</style>").map { html[open.upperBound..<$0.lowerBound] }
        })
        let hash = try Digest.sha256(Array(style.utf8))
        let policy = try #require(StatusPage.securityFields.first { $0.name == "Content-Security-Policy" }?.value)
        #expect(policy.hasPrefix("default-src 'none'; style-src 'sha256-\(Data(hash).base64EncodedString())';"))
        #expect(policy.contains("frame-ancestors 'none'"))
        #expect(!html.contains("<script") && !html.contains("src=\"http"))
    }
}
