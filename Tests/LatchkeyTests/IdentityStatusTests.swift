import Foundation
import LatchkeyAuth
import LatchkeyTestSupport
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct IdentityStatusTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func identity(_ grant: IdentityConfig.Grant) -> IdentityConfig {
        IdentityConfig(name: "id", grant: grant, tokenURL: "https://idp.example/token",
                       timing: TokenTiming(clockSkew: .seconds(30), refreshAhead: .seconds(60)))
    }

    var password: IdentityConfig { identity(.password(username: "u", password: .inline("p"))) }
    var browser: IdentityConfig { identity(.authorizationCode(.init())) }
    var seeded: IdentityConfig { identity(.refreshToken(.inline("r"))) }

    func token(expiresIn seconds: TimeInterval?, refresh: String? = "r") -> TokenSet {
        TokenSet(accessToken: "a", refreshToken: refresh, expiresAt: seconds.map { now.addingTimeInterval($0) },
                 obtainedAt: now.addingTimeInterval(-600))
    }

    @Test func aTokenIsValidUntilServeWouldStopUsingIt() {
        let valid = IdentityStatus(password, stored: token(expiresIn: 31), loggedOut: false, now: now)
        #expect(valid.state == .valid)
        #expect(valid.expiresAt == now.addingTimeInterval(31))
        #expect(valid.obtainedAt == now.addingTimeInterval(-600))
        #expect(valid.hasRefreshToken)
        // Within the clock skew: serve renews it before use.
        #expect(IdentityStatus(password, stored: token(expiresIn: 29), loggedOut: false, now: now).state == .expired)
        #expect(IdentityStatus(password, stored: token(expiresIn: nil), loggedOut: false, now: now).state == .valid)
    }

    @Test func anExpiredTokenIsRenewableWithARefreshTokenOrTheIdentitysOwnGrant() {
        let refreshable = IdentityStatus(browser, stored: token(expiresIn: -5), loggedOut: false, now: now)
        #expect(refreshable.state == .expired)
        #expect(refreshable.detail == "renewed when next needed")
        #expect(IdentityStatus(password, stored: token(expiresIn: -5, refresh: nil), loggedOut: false, now: now).state == .expired)
        let stuck = IdentityStatus(browser, stored: token(expiresIn: -5, refresh: nil), loggedOut: false, now: now)
        #expect(stuck.state == .loginRequired)
        #expect(stuck.detail == "expired, with nothing to renew it; run `latchkey login id`")
    }

    @Test func withoutATokenTheGrantSaysWhatHappensNext() {
        #expect(IdentityStatus(password, stored: nil, loggedOut: false, now: now)
            == IdentityStatus(name: "id", grant: "password", source: .store, state: .noToken, detail: "gets one by itself when first needed"))
        #expect(IdentityStatus(seeded, stored: nil, loggedOut: false, now: now).state == .noToken)
        let browser = IdentityStatus(browser, stored: nil, loggedOut: false, now: now)
        #expect(browser.state == .loginRequired)
        #expect(browser.detail == "not logged in yet; run `latchkey login id`")
    }

    @Test func aLoggedOutIdentityNeedsALoginWhateverItsGrant() {
        let status = IdentityStatus(password, stored: nil, loggedOut: true, now: now)
        #expect(status.state == .loginRequired)
        #expect(status.detail == "logged out with `latchkey logout`; run `latchkey login id`")
        #expect(!status.hasRefreshToken && status.expiresAt == nil)
    }

    @Test func aStaticTokenIsValidUnlessItsJWTExpired() {
        let kii = IdentityConfig(name: "kii", grant: .staticToken(.inline("t")))
        #expect(IdentityStatus(kii, staticToken: .success("opaque"), now: now).state == .valid)
        let claims = Data(#"{"exp":1700000000}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let expired = IdentityStatus(kii, staticToken: .success("h.\(claims).s"), now: now)
        #expect(expired.state == .expired)
        #expect(expired.detail == "a static token is never renewed; store a new one")
        let missing = IdentityStatus(kii, staticToken: .failure(SecretError("file /x does not exist")), now: now)
        #expect(missing.state == .noToken)
        #expect(missing.detail == "its token has no value: file /x does not exist")
    }

    @Test func aRoutesIdentityIsTheChosenOneWhenAllowed() throws {
        let route = RouteConfig(name: "kii", upstream: UpstreamConfig(url: "https://kii.example"),
                                injections: [Injection(target: .header("Authorization"), source: .identity("alice"), template: .token)],
                                selectableIdentities: ["bob"])
        #expect(RouteStatus(route, chosen: nil) == RouteStatus(name: "kii", identity: "alice", configured: "alice", allowed: ["alice", "bob"]))
        #expect(RouteStatus(route, chosen: "bob")?.identity == "bob")
        let stale = try #require(RouteStatus(route, chosen: "carol"))
        #expect(stale.identity == "alice")
        #expect(stale.detail == "`latchkey use` chose carol, which the route does not allow; serve uses alice")
        #expect(RouteStatus(RouteConfig(name: "plain", upstream: UpstreamConfig(url: "https://x.example")), chosen: nil) == nil)
    }

    @Test func theReportGathersFromTheStoreAndNeverShowsAToken() async throws {
        let config = try ConfigTestSupport.load("""
            identities:
              web: { grant: password, username: u, password: { value: pw-secret }, token_url: https://idp.example/token }
              kii: { grant: static, token: { value: static-secret } }
            routes:
              - name: api
                upstream: https://api.example.com
                inject: [{ header: Authorization, identity: web }]
                selectable_identities: [kii]
            """)
        let store = MemoryTokenStore()
        await store.save(TokenSet(accessToken: "access-secret", refreshToken: "refresh-secret", expiresAt: now.addingTimeInterval(3600),
                                  obtainedAt: now.addingTimeInterval(-60)), identity: "web")
        let report = await StatusReport.gather(config: config, store: store, chosen: ["api": "kii"], environment: [:], now: now)
        #expect(report.identities.map(\.name) == ["kii", "web"])
        #expect(report.identities.map(\.state) == [.valid, .valid])
        #expect(report.routes == [RouteStatus(name: "api", identity: "kii", configured: "web", allowed: ["web", "kii"])])

        let text = report.text(now: now)
        #expect(text == """
            IDENTITY  GRANT     TOKEN   STATE  EXPIRES                       OBTAINED              REFRESH TOKEN  NOTE
            kii       static    static  valid  -                             -                     -
            web       password  store   valid  2027-01-15T09:00:00Z (in 1h)  2027-01-15T07:59:00Z  yes

            ROUTE  IDENTITY  CONFIGURED  ALLOWED   NOTE
            api    kii       web         web, kii

            """)
        let json = report.json
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let web = try #require((decoded["identities"] as? [[String: Any]])?.last)
        #expect(web["state"] as? String == "valid")
        #expect(web["refresh_token"] as? Bool == true)
        #expect(web["expires_at"] as? String == "2027-01-15T09:00:00Z")
        #expect(web["detail"] is NSNull)
        for secret in ["access-secret", "refresh-secret", "pw-secret", "static-secret"] {
            #expect(!text.contains(secret) && !json.contains(secret))
        }
    }

    @Test func aMisconfigurationAServeKeptNamesTheKeyToFixInTextAndJSON() async throws {
        let config = try ConfigTestSupport.load("""
            identities:
              web: { grant: client_credentials, token_url: https://idp.example/token, client_id: c, client_secret: { value: s } }
              kii: { grant: static, token: { value: t } }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        let store = MemoryTokenStore()
        await store.saveFailure(FailureRecord(message: "the authorization server refused the request with invalid_client (HTTP 401)",
                                              configKey: "identities.web.client_secret", at: now.addingTimeInterval(-60)), identity: "web")
        let report = await StatusReport.gather(config: config, store: store, chosen: [:], environment: [:], now: now)
        #expect(report.identities.map(\.state) == [.valid, .misconfigured])
        #expect(report.text(now: now) == """
            IDENTITY  GRANT               TOKEN   STATE          EXPIRES  OBTAINED  REFRESH TOKEN  NOTE
            kii       static              static  valid          -        -         -
            web       client_credentials  store   misconfigured  -        -         -              \
            the authorization server refused the request with invalid_client (HTTP 401); fix identities.web.client_secret

            """)
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        let identities = try #require(decoded["identities"] as? [[String: Any]])
        #expect(identities.first?["last_error"] is NSNull)
        let web = try #require(identities.last)
        #expect(web["state"] as? String == "misconfigured")
        let lastError = try #require(web["last_error"] as? [String: String])
        #expect(lastError == ["message": "the authorization server refused the request with invalid_client (HTTP 401)",
                              "config_key": "identities.web.client_secret", "at": "2027-01-15T07:59:00Z"])
    }

    /// TMDB's session: two captures, request_token shown (`secret: false`) and session_id not.
    var recipe: IdentityConfig {
        let capture = { (name: String, secret: Bool) in RecipeCapture(name: name, source: .json(try! JSONPath(parsing: name)), secret: secret) }
        return IdentityConfig(name: "tmdb", grant: .recipe(Recipe(steps: [
            RecipeStep(name: "token", request: RecipeRequest(method: "GET", url: try! RecipeTemplate(parsing: "https://h/t")),
                       captures: [capture("request_token", false)]),
            RecipeStep(name: "session", request: RecipeRequest(method: "POST", url: try! RecipeTemplate(parsing: "https://h/s")),
                       captures: [capture("session_id", true)]),
        ])))
    }

    @Test func aRecipeIdentityShowsTheNamesOfItsCapturesNeverTheirValues() throws {
        let result = TokenSet(accessToken: "sess-secret-79", tokenType: nil, expiresAt: now.addingTimeInterval(3600), obtainedAt: now,
                              captures: ["session_id": "sess-secret-79", "request_token": "rt-shown-1"])
        let stored = IdentityStatus(recipe, stored: result, loggedOut: false, now: now)
        #expect(stored.state == .valid)
        #expect(stored.captures == ["request_token", "session_id"])
        #expect(IdentityStatus(recipe, stored: nil, loggedOut: false, now: now).captures == [])
        #expect(IdentityStatus(password, stored: token(expiresIn: 60), loggedOut: false, now: now).captures == nil)
        let live = IdentityStatus(recipe, live: TokenLifecycle(token: result, timing: .init(), backoff: .init(), canGrant: true),
                                  source: .store, now: now)
        #expect(live.captures == ["request_token", "session_id"])

        let report = StatusReport(identities: [stored, IdentityStatus(password, stored: nil, loggedOut: false, now: now)], routes: [])
        #expect(report.text(now: now) == """
            IDENTITY  GRANT     TOKEN  STATE     EXPIRES                       OBTAINED              REFRESH TOKEN  CAPTURES                   NOTE
            tmdb      recipe    store  valid     2027-01-15T09:00:00Z (in 1h)  2027-01-15T08:00:00Z  no             request_token, session_id
            id        password  store  no token  -                             -                     -              -                          \
            gets one by itself when first needed

            """)
        let identities = try #require((try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])?["identities"] as? [[String: Any]])
        #expect(identities.first?["captures"] as? [String] == ["request_token", "session_id"])
        #expect(identities.last?["captures"] is NSNull)
        for value in ["sess-secret-79", "rt-shown-1"] {
            #expect(!report.json.contains(value) && !report.text(now: now).contains(value))
        }
    }

    @Test func aLogoutOutranksAMisconfiguration() {
        let failure = FailureRecord(message: "refused", configKey: "identities.id.scope", at: now)
        #expect(IdentityStatus(password, stored: nil, loggedOut: true, failure: failure, now: now).state == .loginRequired)
        #expect(IdentityStatus(password, stored: token(expiresIn: 600), loggedOut: false, failure: failure, now: now).state == .misconfigured)
    }

    @Test func aSharedRedisStoreIsReadLikeTheFileStore() async throws {
        let config = try ConfigTestSupport.load("""
            identities:
              web: { grant: client_credentials, token_url: https://idp.example/token, client_id: c, client_secret: { value: s } }
            store: { type: redis, url: "redis://127.0.0.1:6379" }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        let store = MemoryTokenStore()
        await store.save(TokenSet(accessToken: "a", expiresAt: now.addingTimeInterval(3600), obtainedAt: now), identity: "web")
        let report = await StatusReport.gather(config: config, store: store, chosen: [:], environment: [:], now: now)
        #expect(report.identities.map(\.source) == [.store])
        #expect(report.identities.map(\.state) == [.valid])
    }

    @Test func aStoreThatKeepsNothingOnDiskIsNotGuessedAt() async throws {
        let config = try ConfigTestSupport.load("""
            identities:
              web: { grant: client_credentials, token_url: https://idp.example/token, client_id: c, client_secret: { value: s } }
            store: { type: memory }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        let report = await StatusReport.gather(config: config, store: MemoryTokenStore(), chosen: [:], environment: [:], now: now)
        #expect(report.identities.map(\.state) == [.unknown])
        #expect(report.identities.first?.source == .memory)
    }

    @Test(arguments: [(5, "in 5s"), (-5, "5s ago"), (3599, "in 59m"), (7200, "in 2h"), (-172_800, "2d ago")] as [(Int, String)])
    func distancesAreShortAndRoundedDown(_ seconds: Int, _ text: String) {
        #expect(StatusReport.distance(from: now, to: now.addingTimeInterval(TimeInterval(seconds))) == text)
    }
}
