import Foundation
import LatchkeyTestSupport
import LatchkeyUpstream
import Testing
@testable import LatchkeyConfig

/// `grant: recipe`: TheMovieDB's session as the configuration writes it, and every
/// problem a recipe can have, with its place.
@Suite("Config recipes")
struct ConfigRecipeTests {
    /// TheMovieDB's flow, with every key of a recipe.
    static let tmdb = """
        credentials:
          tmdb-key: { env: TMDB_API_KEY }
        identities:
          tmdb-user:
            grant: recipe
            base_url: { url: https://api.themoviedb.org/3, connect_timeout: 5s }
            secrets:
              username: { env: TMDB_USERNAME }
              password: { file: /run/secrets/tmdb-password }
            prompts:
              otp: "One-time code"
            steps:
              - name: request_token
                request:
                  url: authentication/token/new
                  query: { api_key: "{credentials.tmdb-key}" }
                  headers: { Accept: application/json, X-Code: "{prompts.otp}" }
                expect: { status: [200, 201], json: { success: true, "$.meta.version": 3 } }
                capture:
                  request_token: { json: request_token }
                  expires_at: { json: expires_at, secret: false }
              - name: validate_with_login
                request:
                  method: post
                  url: https://api.themoviedb.org/3/authentication/token/validate_with_login
                  json:
                    username: "{secrets.username}"
                    password: "{secrets.password}"
                    request_token: "{request_token}"
                    remember: true
                    tries: 2
                    ratio: 0.5
                    note: null
                    tags: ["a", "{request_token}", 1]
                    nested: { deep: "x{{y}}" }
              - name: session
                request:
                  method: POST
                  url: authentication/session/new
                  form: { request_token: "{request_token}" }
                expect: { status: 200 }
                capture:
                  sid_header: { header: X-Session }
                  sid_cookie: { cookie: sid }
                  session_id: { json: "items[0].session_id" }
            logout:
              request:
                method: DELETE
                url: authentication/session
                query: { api_key: "{credentials.tmdb-key}" }
                json: { session_id: "{session_id}" }
            expires_at: expires_at
            acquire: eager
            keep_warm: true
            hook: [/usr/bin/true]
        routes:
          - name: tmdb
            path: /tmdb
            upstream: https://api.themoviedb.org/3
            inject:
              - { query: api_key, credential: tmdb-key }
              - { query: session_id, identity: tmdb-user, value: "{session_id}" }
              - { header: X-Token, identity: tmdb-user, value: "Session {token}" }
        """

    @Test func everyKeyOfTheTMDBRecipe() throws {
        let config = try ConfigTestSupport.load(Self.tmdb)
        let identity = try #require(config.identities.first)
        guard case .recipe(let recipe) = identity.grant else {
            Issue.record("not a recipe: \(identity.grant)")
            return
        }
        #expect(recipe.baseURL == "https://api.themoviedb.org/3")
        #expect(identity.idpOptions.connectTimeout == .seconds(5))
        #expect(recipe.secrets == [RecipeSecret(name: "username", source: .environment("TMDB_USERNAME")),
                                   RecipeSecret(name: "password", source: .file("/run/secrets/tmdb-password"))])
        #expect(recipe.credentials == [RecipeSecret(name: "tmdb-key", source: .environment("TMDB_API_KEY"))])
        #expect(recipe.prompts == [RecipePrompt(name: "otp", text: "One-time code")])
        #expect(identity.logsInInteractively && identity.acquireEagerly && identity.keepWarm)
        #expect(identity.hook == ["/usr/bin/true"])
        #expect(recipe.expiry == .capturedTime("expires_at"))
        #expect(recipe.steps.map(\.name) == ["request_token", "validate_with_login", "session"])

        let first = recipe.steps[0]
        #expect(first.request == RecipeRequest(
            method: "GET", url: try RecipeTemplate(parsing: "authentication/token/new"),
            query: [RecipeField(name: "api_key", value: try RecipeTemplate(parsing: "{credentials.tmdb-key}"))],
            headers: [RecipeField(name: "Accept", value: try RecipeTemplate(parsing: "application/json")),
                      RecipeField(name: "X-Code", value: try RecipeTemplate(parsing: "{prompts.otp}"))]))
        #expect(first.expect == RecipeExpectation(statuses: [200, 201], fields: [
            JSONFieldMatch(path: try JSONPath(parsing: "success"), value: .bool(true)),
            JSONFieldMatch(path: try JSONPath(parsing: "meta.version"), value: .number(3)),
        ]))
        #expect(first.captures == [
            RecipeCapture(name: "request_token", source: .json(try JSONPath(parsing: "request_token"))),
            RecipeCapture(name: "expires_at", source: .json(try JSONPath(parsing: "expires_at")), secret: false),
        ])

        let second = recipe.steps[1]
        #expect(second.request.method == "POST")
        #expect(second.request.body == .json(.object([
            (name: "username", value: .string(try RecipeTemplate(parsing: "{secrets.username}"))),
            (name: "password", value: .string(try RecipeTemplate(parsing: "{secrets.password}"))),
            (name: "request_token", value: .string(try RecipeTemplate(parsing: "{request_token}"))),
            (name: "remember", value: .literal(.bool(true))),
            (name: "tries", value: .literal(.number(2))),
            (name: "ratio", value: .literal(.number(0.5))),
            (name: "note", value: .literal(.null)),
            (name: "tags", value: .array([.string(try RecipeTemplate(parsing: "a")), .string(try RecipeTemplate(parsing: "{request_token}")),
                                          .literal(.number(1))])),
            (name: "nested", value: .object([(name: "deep", value: .string(try RecipeTemplate(parsing: "x{{y}}")))])),
        ])))
        #expect(second.expect == RecipeExpectation() && second.captures.isEmpty)

        let third = recipe.steps[2]
        #expect(third.request.body == .form([RecipeField(name: "request_token", value: try RecipeTemplate(parsing: "{request_token}"))]))
        #expect(third.captures.map(\.source) == [.header("X-Session"), .cookie("sid"), .json(try JSONPath(parsing: "items[0].session_id"))])
        #expect(recipe.tokenCapture == "session_id")

        let logout = try #require(recipe.logout)
        #expect(logout.name == "logout" && logout.request.method == "DELETE" && logout.captures.isEmpty)

        #expect(identity.secretEntries.map(\.name) == [
            "identity:tmdb-user:secret:username", "identity:tmdb-user:secret:password", "identity:tmdb-user:credential:tmdb-key",
        ])
        let injections = try #require(config.routes.first?.injections)
        // session_id, the recipe's last capture, is its token: injected as the token.
        #expect(injections.map(\.capture) == [nil, nil, nil])
        #expect(injections[1].template == CredentialTemplate(placeholder: "session_id"))
        #expect(injections[2].template.prefix == "Session ")
    }

    /// The reference's commented example, uncommented, is a valid recipe.
    @Test func theReferenceExampleIsValid() throws {
        let text = try String(contentsOf: ConfigTestSupport.configsDirectory.appendingPathComponent("latchkey.example.yaml"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "  # tmdb-user:"))
        let example = lines[start...].prefix { $0.hasPrefix("  #") }.map { "  " + $0.dropFirst(4) }
        let config = try ConfigTestSupport.load("""
            credentials:
              tmdb: { env: TMDB_API_KEY }
            identities:
            \(example.joined(separator: "\n"))
            \(ConfigTestSupport.minimalRoutes)
            """)
        guard case .recipe(let recipe)? = config.identities.first?.grant else {
            Issue.record("no recipe")
            return
        }
        #expect(recipe.steps.count == 3 && recipe.tokenCapture == "session_id" && recipe.logout != nil)
    }

    private func problems(_ recipe: String, credentials: String = "tmdb-key: { value: k }") -> [String] {
        ConfigTestSupport.problems("""
            credentials:
              \(credentials)
            identities:
              r:
                grant: recipe
            \(recipe)
            \(ConfigTestSupport.minimalRoutes)
            """).map(\.description)
    }

    @Test func missingStepsAndCaptures() {
        #expect(problems("    base_url: https://a.example") == [
            "test.yaml:5:5: identities.r: missing key 'steps' (expected a list of steps, each with a name and a request)",
        ])
        #expect(problems("    steps: []") == [
            "test.yaml:6:12: identities.r.steps: empty list (expected at least one step)",
        ])
        #expect(problems("""
                steps:
                  - request: { url: https://a.example/x }
                  - { name: two }
            """) == [
            "test.yaml:7:7: identities.r.steps: no step captures a value (expected a capture: in a step, e.g. session_id: { json: session_id }; the last capture is the identity's token)",
            "test.yaml:7:9: identities.r.steps[0]: missing key 'name' (expected the step's name, which its errors and logs show)",
            "test.yaml:8:9: identities.r.steps[1]: missing key 'request' (expected the step's request: method, url, and query, headers, json or form)",
        ])
    }

    @Test func stepNamesMethodsAndURLs() {
        #expect(problems("""
                steps:
                  - name: a
                    request: { method: "GE T", url: "https://{host}/x" }
                    capture: { t: { json: t } }
                  - name: a
                    request: { url: relative/path }
                  - name: "b c"
                    request: { url: "https://a.example/x?y=1" }
                  - name: d
                    request: { url: "ftp://a.example/x" }
                  - name: e
                    request: { url: "//evil.example/x" }
            """) == [
            "test.yaml:8:28: identities.r.steps[0].request.method: invalid method (expected an HTTP method such as GET, POST or DELETE)",
            "test.yaml:8:41: identities.r.steps[0].request.url: a placeholder in the URL's scheme or host (expected a fixed scheme and host; placeholders only in the path)",
            "test.yaml:8:41: identities.r.steps[0].request.url: unknown capture 'host' (expected no capture before this step: captures come from the answers of earlier steps)",
            "test.yaml:10:15: identities.r.steps[1].name: duplicate step name 'a' (also steps[0]) (expected a unique name for each step)",
            "test.yaml:11:25: identities.r.steps[1].request.url: a relative URL without base_url (expected an absolute http or https URL, or base_url on the identity)",
            "test.yaml:12:15: identities.r.steps[2].name: invalid step name (expected letters, digits, '-', '_' or '.', at most 64 characters)",
            "test.yaml:13:25: identities.r.steps[2].request.url: URL with a query or fragment (expected the URL's parameters under query:)",
            "test.yaml:15:25: identities.r.steps[3].request.url: unsupported URL scheme (expected an http or https URL such as https://api.example.com/v1)",
            "test.yaml:17:25: identities.r.steps[4].request.url: a relative URL without base_url (expected an absolute http or https URL, or base_url on the identity)",
        ])
        #expect(problems("""
                base_url: https://a.example/v3?x=1
                steps:
                  - name: a
                    request: { url: "//evil.example/x" }
                    capture: { t: { json: t } }
            """) == [
            "test.yaml:6:15: identities.r.base_url: URL must not contain a query; use inject with query: for parameters (expected an http or https URL such as https://api.example.com/v1)",
            "test.yaml:9:25: identities.r.steps[0].request.url: a relative URL naming a host (expected an http or https URL, or a path relative to base_url such as authentication/token/new)",
        ])
    }

    @Test func fieldsAndBodies() {
        #expect(problems("""
                base_url: https://a.example
                steps:
                  - name: a
                    request:
                      url: x
                      query: { "a&b": "1", ok: "{oops" }
                      headers: { Host: h, "X-A": "{credentials.tmdb-key}", "Bad Name": x }
                      json: { a: 1 }
                      form: { b: 2 }
                    capture: { t: { json: t } }
                  - name: b
                    request:
                      url: y
                      json: "{t}"
                  - name: c
                    request:
                      url: z
                      json: { p: {secrets.password}, n: .inf }
            """) == [
            "test.yaml:10:11: identities.r.steps[0].request: both json and form (expected one body: json or form)",
            "test.yaml:11:27: identities.r.steps[0].request.query.a&b: invalid query parameter name (expected a name such as api_key)",
            "test.yaml:11:36: identities.r.steps[0].request.query.ok: invalid template: unclosed '{' (expected text with placeholders {CAPTURE}, {credentials.NAME}, {secrets.NAME} or {prompts.NAME}; {{ and }} for braces)",
            "test.yaml:12:28: identities.r.steps[0].request.headers.Host: Latchkey manages the Host header itself (expected a header other than hop-by-hop ones, Host and Content-Length)",
            "test.yaml:12:76: identities.r.steps[0].request.headers.<key not shown>: invalid header name (expected an HTTP field name (RFC 9110 token))",
            "test.yaml:19:17: identities.r.steps[1].request.json: invalid value (expected a mapping or a list, the JSON body)",
            "test.yaml:23:22: identities.r.steps[2].request.json.p: an unquoted {…} is a YAML mapping, not a template (expected the template in quotes, e.g. \"{secrets.password}\")",
            "test.yaml:23:45: identities.r.steps[2].request.json.n: not a finite number (expected a string, number, true, false or null)",
        ])
    }

    @Test func expectationsAndCaptures() {
        #expect(problems("""
                base_url: https://a.example
                steps:
                  - name: a
                    request: { url: x }
                    expect: { status: [99, 200, "x"], json: { "a..b": 1, c: [1] } }
                    capture:
                      token: { json: t }
                      "a.b": { json: t }
                      none: {}
                      both: { json: t, header: X-T }
                      badpath: { json: "x[" }
                      badheader: { header: "X T" }
                      badcookie: { cookie: "a;b" }
                      ok: { json: ok, secret: maybe }
                  - name: b
                    request: { url: y }
                    expect: { status: [] }
                    capture: { ok: { json: again } }
            """) == [
            "test.yaml:10:28: identities.r.steps[0].expect.status[0]: not an HTTP status (expected a status from 100 to 599)",
            "test.yaml:10:37: identities.r.steps[0].expect.status[2]: invalid value (expected an integer)",
            "test.yaml:10:59: identities.r.steps[0].expect.json.a..b: invalid JSON path: an empty name between dots (expected a JSON path such as session_id, data.token or items[0].id, optionally starting with $.)",
            "test.yaml:10:65: identities.r.steps[0].expect.json.c: found a list (expected a string, number, true, false or null)",
            "test.yaml:12:18: identities.r.steps[0].capture.token: 'token' is reserved (expected another name: token, access_token, credentials, secrets, prompts are not captures)",
            "test.yaml:13:18: identities.r.steps[0].capture.a.b: invalid capture name (expected letters, digits, '-' or '_', at most 64 characters)",
            "test.yaml:14:17: identities.r.steps[0].capture.none: no source (expected exactly one of json (a JSON path), header, cookie)",
            "test.yaml:15:17: identities.r.steps[0].capture.both: more than one source (json, header) (expected exactly one of json (a JSON path), header, cookie)",
            "test.yaml:16:28: identities.r.steps[0].capture.badpath.json: invalid JSON path: an index must be written [N] with N a whole number (expected a JSON path such as session_id, data.token or items[0].id, optionally starting with $.)",
            "test.yaml:17:32: identities.r.steps[0].capture.badheader.header: invalid header name (expected an HTTP field name (RFC 9110 token))",
            "test.yaml:18:32: identities.r.steps[0].capture.badcookie.cookie: invalid cookie name (expected a cookie name (RFC 6265 token))",
            "test.yaml:19:35: identities.r.steps[0].capture.ok.secret: invalid value (expected true or false)",
            "test.yaml:22:27: identities.r.steps[1].expect.status: empty list (expected statuses such as [200]; omit the key for any 2xx)",
            "test.yaml:23:24: identities.r.steps[1].capture.ok: also captured by steps[0] (expected a unique name for each capture)",
        ])
    }

    @Test func templatesNameWhatTheirPlaceMayUse() {
        #expect(problems("""
                base_url: https://a.example
                secrets: { password: { value: p } }
                prompts: { otp: "Code", unused: "Never asked" }
                steps:
                  - name: a
                    request:
                      url: "x/{later}"
                      query: { k: "{credentials.tmdb-kye}", p: "{secrets.pasword}", o: "{prompts.otpp}", s: "{own}" }
                    capture: { own: { json: own } }
                  - name: b
                    request: { url: y, headers: { X-O: "{prompts.otp}", X-C: "{ownn}" } }
                    capture: { later: { json: l } }
                logout:
                  request: { url: z, query: { a: "{later}", b: "{prompts.otp}", c: "{nope}" } }
            """) == [
            "test.yaml:8:37: identities.r.prompts.unused: no step's template names this prompt (expected a prompt that a step's template uses; any prompt makes the identity log in with `latchkey login` only)",
            "test.yaml:12:16: identities.r.steps[0].request.url: the capture 'later' is made by steps[1], after this request (expected a capture of an earlier step)",
            "test.yaml:13:23: identities.r.steps[0].request.query.k: unknown credential 'tmdb-kye'; did you mean 'tmdb-key'? (expected one of tmdb-key)",
            "test.yaml:13:52: identities.r.steps[0].request.query.p: unknown secret 'pasword'; did you mean 'password'? (expected one of password)",
            "test.yaml:13:76: identities.r.steps[0].request.query.o: unknown prompt 'otpp'; did you mean 'otp'? (expected one of otp, unused)",
            "test.yaml:13:97: identities.r.steps[0].request.query.s: the capture 'own' is made by this step, after this request (expected a capture of an earlier step)",
            "test.yaml:16:66: identities.r.steps[1].request.headers.X-C: unknown capture 'ownn'; did you mean 'own'? (expected a capture of an earlier step: own)",
            "test.yaml:19:52: identities.r.logout.request.query.b: a prompt in the logout step (expected captures, credentials and secrets: `latchkey logout` asks for nothing)",
            "test.yaml:19:72: identities.r.logout.request.query.c: unknown capture 'nope' (expected one of later, own)",
        ])
    }

    @Test func expiryForeignKeysAndNames() {
        #expect(problems("""
                token_url: https://idp.example/token
                client_id: c
                username: u
                base_url: https://a.example
                secrets: { "a.b": { value: x }, empty: {} }
                prompts: { code: "" }
                steps:
                  - name: a
                    request: { url: x, query: { c: "{prompts.code}" } }
                    capture: { t: { json: t } }
                lifetime: 1h
                expires_in: t
            """) == [
            "test.yaml:6:16: identities.r.token_url: a recipe has no token endpoint; its steps make its credential (expected only the keys of the recipe grant, and acquire, keep_warm, hook, clock_skew, refresh_ahead)",
            "test.yaml:7:16: identities.r.client_id: a recipe has no token endpoint; its steps make its credential (expected only the keys of the recipe grant, and acquire, keep_warm, hook, clock_skew, refresh_ahead)",
            "test.yaml:8:15: identities.r.username: not used by the recipe grant (expected only the keys of the recipe grant)",
            "test.yaml:10:23: identities.r.secrets.a.b: invalid secret name (expected letters, digits, '-' or '_', at most 64 characters)",
            "test.yaml:10:44: identities.r.secrets.empty: no secret given (expected exactly one of value, env, file)",
            "test.yaml:11:22: identities.r.prompts.code: empty or not one line (expected a line that asks for the value, e.g. \"One-time code\")",
            "test.yaml:17:17: identities.r.expires_in: more than one of lifetime, expires_in (expected one of lifetime, expires_in, expires_at; none: used until a route's renew_on refuses it)",
        ])
        #expect(problems("""
                base_url: https://a.example
                steps: [{ name: a, request: { url: x }, capture: { t: { json: t } } }]
                expires_at: tt
                lifetime: 0s
            """).contains(
            "test.yaml:8:17: identities.r.expires_at: more than one of lifetime, expires_at (expected one of lifetime, expires_in, expires_at; none: used until a route's renew_on refuses it)"))
        #expect(problems("""
                base_url: https://a.example
                steps: [{ name: a, request: { url: x }, capture: { t: { json: t } } }]
                expires_at: tt
            """) == ["test.yaml:8:17: identities.r.expires_at: unknown capture 'tt'; did you mean 't'? (expected one of t)"])
    }

    @Test func otherGrantsRefuseRecipeKeys() {
        let found = ConfigTestSupport.identityProblems("""
              p: { grant: password, username: u, password: { value: p }, token_url: https://idp.example/token, steps: [] }
            """, injected: "p")
        #expect(found.map(\.description) == [
            "test.yaml:2:107: identities.p.steps: not used by the password grant (expected only the keys of the password grant)",
        ])
    }

    @Test func lifetimeAndSecondsExpiry() throws {
        func expiry(_ key: String) throws -> RecipeExpiry? {
            let config = try ConfigTestSupport.load("""
                identities:
                  r:
                    grant: recipe
                    steps: [{ name: a, request: { url: "https://a.example/x" }, capture: { t: { json: t }, sid: { json: sid } } }]
                    \(key)
                \(ConfigTestSupport.minimalRoutes)
                """)
            guard case .recipe(let recipe)? = config.identities.first?.grant else { return nil }
            return recipe.expiry
        }
        #expect(try expiry("lifetime: 30d") == .lifetime(.seconds(30 * 86400)))
        #expect(try expiry("expires_in: t") == .capturedSeconds("t"))
        #expect(try expiry("") == .never)
        // The token (the last capture) holding the expiry would make {token} a time.
        #expect(throws: ConfigErrors.self) { try expiry("expires_at: sid") }
    }
}
