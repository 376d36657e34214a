import Foundation
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

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

    @Test func signedAssertionGrantsAndClientAuthentication() throws {
        let config = try ConfigTestSupport.load("""
            identities:
              robot: { grant: jwt_bearer, service_account_file: /keys/sa.json, scope: read }
              svc: { grant: jwt_bearer, key_file: /keys/svc.pem, assertion_issuer: svc, token_url: https://idp.example/token }
              pod:
                grant: token_exchange
                subject_token_file: /var/run/secrets/tokens/idp
                token_url: https://idp.example/token
                client_id: pod
                client_auth: private_key_jwt
                client_key_file: /keys/client.pem
            """ + "\n" + route("{ header: Authorization, identity: robot }"))
        let byName = Dictionary(uniqueKeysWithValues: config.identities.map { ($0.name, $0) })
        #expect(byName["robot"]?.grant == .jwtBearer(.init(key: .serviceAccountFile("/keys/sa.json"))))
        #expect(byName["robot"]?.tokenURL == nil)
        #expect(byName["svc"]?.grant == .jwtBearer(.init(key: .pemFile("/keys/svc.pem"), issuer: "svc")))
        #expect(byName["pod"]?.grant == .tokenExchange(subjectTokenFile: "/var/run/secrets/tokens/idp",
                                                       subjectTokenType: "urn:ietf:params:oauth:token-type:jwt", requestedTokenType: nil))
        #expect(byName["pod"]?.clientAuth == .privateKeyJWT)
        #expect(byName["pod"]?.clientKeyFile == "/keys/client.pem")
    }

    @Test func assertionGrantProblems() {
        let problems = ConfigTestSupport.problems("""
            identities:
              a: { grant: jwt_bearer, token_url: https://idp.example/token }
              b: { grant: jwt_bearer, key_file: /k.pem, token_url: https://idp.example/token }
              c: { grant: client_credentials, token_url: https://idp.example/token, client_id: c, client_auth: private_key_jwt }
              d: { grant: token_exchange, token_url: https://idp.example/token }
            """ + "\n" + route("{ header: Authorization, identity: a }"))
        #expect(problems.contains { $0.path == "identities.a" && $0.message.contains("'key_file' or 'service_account_file'") })
        #expect(problems.contains { $0.path == "identities.b" && $0.message.contains("'assertion_issuer'") })
        #expect(problems.contains { $0.path == "identities.c" && $0.message.contains("without client_key_file") })
        #expect(problems.contains { $0.path == "identities.d" && $0.message.contains("'subject_token_file'") })
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
