import Foundation
import Testing
@testable import Latchkey

@Suite("Config identities")
struct ConfigIdentityTests {
    private func route(_ inject: String, extra: String = "") -> String {
        """
        routes:
          - name: api
            upstream: https://api.example.com
            inject: [\(inject)]
        \(extra)
        """
    }

    private let passwordIdentity = """
        identities:
          podio:
            grant: password
            username: alice
            password: { env: PODIO_PASSWORD }
            token_url: https://podio.com/oauth/token
            client_id: app
            client_secret: { value: s3cret }
            client_auth: client_secret_post
            scope: global
            refresh_ahead: 0s
        """

    @Test func passwordIdentityAndItsInjection() throws {
        let config = try ConfigTestSupport.load(passwordIdentity + "\n" + route("{ header: Authorization, value: \"OAuth2 {access_token}\", identity: podio }"))
        let identity = try #require(config.identities.first)
        #expect(identity.grant == .password(username: "alice", password: .environment("PODIO_PASSWORD")))
        #expect(identity.tokenURL == "https://podio.com/oauth/token")
        #expect(identity.clientAuth == .clientSecretPost)
        #expect(identity.scope == "global")
        #expect(identity.timing.refreshAhead == .zero)
        #expect(config.routes[0].injections[0].source == .identity("podio"))
        #expect(config.routes[0].renewal == RenewalPolicy())
        // Its secrets are held like credentials: re-read, and masked in logs.
        #expect(config.secretEntries.map(\.name).sorted() == ["identity:podio:client_secret", "identity:podio:password"])
    }

    @Test func customGrantWithLiteralAndSecretFields() throws {
        let config = try ConfigTestSupport.load("""
            identities:
              app:
                grant: custom
                grant_type: app
                params: { app_id: 23456, app_token: { value: t0k } }
                token_url: https://podio.com/oauth/token
            """ + "\n" + route("{ header: Authorization, identity: app }"))
        #expect(config.identities[0].grant == .custom(grantType: "app", parameters: [
            .init(name: "app_id", value: .literal("23456")), .init(name: "app_token", value: .secret(.inline("t0k"))),
        ]))
        #expect(config.identities[0].clientAuth == .none)
    }

    @Test func renewalSettingsOnTheRoute() throws {
        let config = try ConfigTestSupport.load(passwordIdentity + "\n" + route(
            "{ header: Authorization, identity: podio }",
            extra: "    renew_on: [401, 403]\n    renew_on_invalid_token: false\n    replay_limit: 64KiB"))
        #expect(config.routes[0].renewal == RenewalPolicy(statuses: [401, 403], onInvalidTokenChallenge: false, replayLimit: 65536))
    }

    @Test func everyIdentityProblemIsLocated() {
        let problems = ConfigTestSupport.problems("""
            credentials:
              shared: { value: x }
            identities:
              a: { grant: magic }
              b: { grant: password, token_url: https://idp.example/token }
              c: { grant: client_credentials, token_url: https://idp.example/token, client_auth: client_secret_basic, client_id: c, token: { value: t } }
              shared: { grant: static, token: { value: t }, token_url: https://idp.example/token }
            """ + "\n" + route("{ header: Authorization, identity: nope }, { header: X-Other, identity: b, credential: shared }"))
        let paths = problems.map(\.path)
        #expect(paths.contains("identities.a.grant"))
        #expect(problems.contains { $0.path == "identities.b" && $0.message.contains("'username'") })
        #expect(problems.contains { $0.path == "identities.b" && $0.message.contains("'password'") })
        #expect(problems.contains { $0.path == "identities.c" && $0.message.contains("without client_secret") })
        #expect(paths.contains("identities.c.token"))
        #expect(paths.contains("identities.shared"))
        #expect(paths.contains("identities.shared.token_url"))
        #expect(problems.contains { $0.path == "routes[0].inject[0].identity" && $0.message.contains("unknown identity 'nope'") })
        #expect(problems.contains { $0.path == "routes[0].inject[1]" && $0.message.contains("both credential and identity") })
    }

    @Test func oneIdentityPerRoute() {
        let problems = ConfigTestSupport.problems("""
            identities:
              one: { grant: static, token: { value: a } }
              two: { grant: static, token: { value: b } }
            """ + "\n" + route("{ header: Authorization, identity: one }, { cookie: session, identity: one }, { header: X-Two, identity: two }"))
        #expect(problems.map(\.path) == ["routes[0].inject[2].identity"])
    }
}
