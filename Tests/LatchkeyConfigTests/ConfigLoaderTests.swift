import LatchkeyUpstream
import Foundation
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

@Suite("Config loader")
struct ConfigLoaderTests {
    @Test func minimalConfigGetsTheDefaults() throws {
        let config = try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes)
        #expect(config.listeners == [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))])
        #expect(config.server == ServerSettings())
        #expect(config.limits == Limits())
        #expect(config.logging == LoggingSettings())
        #expect(config.routes == [RouteConfig(name: "api", upstream: UpstreamConfig(url: "https://api.example.com"))])
    }

    @Test func unknownKeyAtDepthReportsItsLine() throws {
        let problems = ConfigTestSupport.problems("""
            routes:
              - name: api
                upstream:
                  url: https://api.example.com
                  conect_timeout: 5s
            """)
        #expect(problems.count == 1)
        let problem = try #require(problems.first)
        #expect(problem.line == 5)
        #expect(problem.column == 7)
        #expect(problem.path == "routes[0].upstream.conect_timeout")
        #expect(problem.message.contains("unknown key 'conect_timeout'"))
        #expect(problem.message.contains("did you mean 'connect_timeout'"))
        #expect(problem.expected?.contains("connect_timeout") == true)
    }

    @Test func unknownTopLevelKey() {
        let problems = ConfigTestSupport.problems(ConfigTestSupport.minimalRoutes + "\nlisteners_extra: 1\n")
        #expect(problems.map(\.path) == ["listeners_extra"])
        #expect(problems.first?.line == 4)
    }

    @Test func reportsEveryProblemInOrderOfLines() {
        let problems = ConfigTestSupport.problems("""
            server:
              loops: many
            listeners:
              - listen: 127.0.0.1:99999
                colour: blue
            routes:
              - name: a
                path: nope
                upstream: ftp://example.com
                inject:
                  - { header: X-Key, credential: missing }
              - name: b
                upstream: https://example.com
                strip_prefix: perhaps
            logging: { format: xml }
            """)
        #expect(problems.map(\.path) == [
            "server.loops",
            "listeners[0].listen",
            "listeners[0].colour",
            "routes[0].path",
            "routes[0].upstream",
            "routes[0].inject[0].credential",
            "routes[1].strip_prefix",
            "logging.format",
        ])
        #expect(problems.map(\.line) == [2, 4, 5, 8, 9, 11, 14, 15])
        #expect(problems.allSatisfy { $0.file == "test.yaml" })
    }

    @Test func descriptionIsFileLineColumnPathMessageExpected() {
        let problems = ConfigTestSupport.problems("""
            routes:
              - upstream: https://api.example.com
                path: /a
            limits:
              max_headers: [1]
            """)
        #expect(problems.map(\.description) == ["test.yaml:5:16: limits.max_headers: found a list (expected an integer)"])
        let errors = ConfigErrors(problems + problems)
        #expect(errors.description.split(separator: "\n").count == 2)
    }

    @Test func yamlSyntaxErrorHasItsLine() {
        let problems = ConfigTestSupport.problems("""
            routes:
              - name: a
                upstream: [https://example.com
            limits: {}
            """)
        #expect(problems.count == 1)
        #expect(problems.first?.line != nil)
        #expect(problems.first?.message.hasPrefix("YAML syntax error") == true)
    }

    @Test func duplicateKeyIsAnError() {
        let problems = ConfigTestSupport.problems("""
            routes:
              - name: a
                upstream: https://example.com
                upstream: https://example.org
            """)
        #expect(problems.count == 1)
        #expect(problems.first?.message.contains("duplicate key 'upstream' in a mapping (first at line 3)") == true)
        #expect(problems.first?.line == 4)
    }

    @Test func emptyDocumentNeedsRoutes() {
        let problems = ConfigTestSupport.problems("")
        #expect(problems.map(\.path) == ["routes"])
        #expect(problems.first?.expected?.contains("at least one route") == true)
    }

    @Test func rootMustBeAMapping() {
        let problems = ConfigTestSupport.problems("- a\n- b\n")
        #expect(problems.first?.path == "")
        #expect(problems.first?.message == "found a list")
    }

    @Test func missingFileIsReported() {
        #expect(throws: ConfigErrors.self) {
            try ConfigLoader.load(path: "/nonexistent/latchkey.yaml")
        }
        do {
            _ = try ConfigLoader.load(path: "/nonexistent/latchkey.yaml")
        } catch {
            #expect(error.description == "/nonexistent/latchkey.yaml: no such file")
        }
    }

    @Test func anchorsAndMergeKeysWithExtensionFields() throws {
        let config = try ConfigTestSupport.load("""
            x-upstream: &upstream
              url: https://api.example.com
              connect_timeout: 3s
            routes:
              - { name: a, path: /a, upstream: *upstream }
              - name: b
                path: /b
                upstream:
                  <<: *upstream
                  http2: true
            """)
        #expect(config.routes.map(\.upstream.options.connectTimeout) == [.seconds(3), .seconds(3)])
        #expect(config.routes.map(\.upstream.options.http2) == [false, true])
    }

    /// YAML 1.1's merge type: the mapping's own keys win over merged ones, and in a list of
    /// merged mappings an earlier one wins over a later one.
    @Test func mergeKeysYieldToOwnKeysAndToEarlierMappingsOfAList() throws {
        let config = try ConfigTestSupport.load("""
            x-slow: &slow { url: https://slow.example.com, connect_timeout: 9s, http2: true }
            x-fast: &fast { url: https://fast.example.com, connect_timeout: 1s }
            routes:
              - name: a
                path: /a
                upstream:
                  <<: *slow
                  connect_timeout: 2s
              - name: b
                path: /b
                upstream:
                  <<: [*fast, *slow]
            """)
        #expect(config.routes.map(\.upstream.url) == ["https://slow.example.com", "https://fast.example.com"])
        #expect(config.routes.map(\.upstream.options.connectTimeout) == [.seconds(2), .seconds(1)])
        #expect(config.routes.map(\.upstream.options.http2) == [true, true])
    }

    @Test func durationsAcceptUnitsAndIntegerSeconds() throws {
        let config = try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes + """

            server: { grace_period: 90 }
            limits: { head_timeout: 500ms, idle_timeout: 1m30s, tunnel_idle_timeout: 1h }
            """)
        #expect(config.server.gracePeriod == .seconds(90))
        #expect(config.limits.tunnelIdleTimeout == .seconds(3600))
        #expect(config.limits.headTimeout == .milliseconds(500))
        #expect(config.limits.idleTimeout == .seconds(90))
    }

    @Test func badDurationNamesTheNotation() {
        let problems = ConfigTestSupport.problems(ConfigTestSupport.minimalRoutes + "\nlimits: { head_timeout: soon }\n")
        #expect(problems.map(\.path) == ["limits.head_timeout"])
        #expect(problems.first?.message == "invalid duration")
        #expect(problems.first?.expected?.contains("500ms") == true)
    }

    @Test func sizesAcceptUnits() throws {
        let config = try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes + """

            limits: { max_header_bytes: 32KiB, max_body_bytes: 1GB, max_request_line: 4096 }
            """)
        #expect(config.limits.maxHeaderBytes == 32 * 1024)
        #expect(config.limits.maxRequestBodyBytes == 1_000_000_000)
        #expect(config.limits.maxRequestLineBytes == 4096)
    }

    @Test func prefixHandling() throws {
        let config = try ConfigTestSupport.load("""
            routes:
              - { name: strip, path: /a/, upstream: https://a.example }
              - { name: keep, path: /b, upstream: https://b.example, strip_prefix: false }
              - { name: replace, path: /c, upstream: https://c.example, replace_prefix: /v3 }
            """)
        #expect(config.routes.map(\.pathPrefix) == ["/a", "/b", "/c"])
        #expect(config.routes.map(\.prefixReplacement) == ["", nil, "/v3"])
    }

    @Test func longUpstreamForm() throws {
        let config = try ConfigTestSupport.load("""
            routes:
              - name: api
                upstream:
                  url: https://api.example.com/base
                  ca_file: certs/ca.pem
                  client_cert: /etc/c.pem
                  client_key: /etc/c.key
                  http2: true
                  proxy: http://proxy.corp:3128
                  connect_timeout: 2s
                  first_byte_timeout: 30s
                  idle_timeout: 1m
                via: latchkey
                preserve_host: true
                pass_client_authorization: true
                cookies: { domain: localhost, map_path: false, drop_secure_on_loopback: true }
            """, baseDirectory: "/etc/latchkey")
        let route = try #require(config.routes.first)
        #expect(route.upstream == UpstreamConfig(url: "https://api.example.com/base", options: UpstreamOptions(
            caFile: "/etc/latchkey/certs/ca.pem", clientCertificateFile: "/etc/c.pem",
            clientKeyFile: "/etc/c.key", http2: true, proxy: "http://proxy.corp:3128", connectTimeout: .seconds(2),
            firstByteTimeout: .seconds(30), idleTimeout: .seconds(60)
        )))
        #expect(route.via == "latchkey")
        #expect(route.preserveHost)
        #expect(route.passClientAuthorization)
        #expect(route.cookies == CookieRewrite(domain: .map("localhost"), mapPath: false, dropSecureOnLoopback: true))
    }

    @Test func relativeSecretFilesAreTakenAgainstTheConfigDirectory() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try "token-value\n".write(to: directory.appendingPathComponent("token"), atomically: true, encoding: .utf8)
        let configFile = directory.appendingPathComponent("latchkey.yaml")
        try """
            credentials:
              api: { file: token }
            routes:
              - name: api
                upstream: https://api.example.com
                inject: [{ header: X-Api-Key, credential: api }]
            """.write(to: configFile, atomically: true, encoding: .utf8)
        let config = try ConfigLoader.load(path: configFile.path)
        #expect(config.credentials["api"] == .file(directory.appendingPathComponent("token").path))
    }

    @Test func checkExternalReportsMissingFilesAndVariables() {
        let problems = ConfigTestSupport.problems("""
            credentials:
              a: { file: /nonexistent/secret }
              b: { env: LATCHKEY_TEST_UNSET }
              c: { env: LATCHKEY_TEST_SET }
            routes:
              - name: api
                upstream: { url: https://api.example.com, ca_file: /nonexistent/ca.pem }
            """, checkExternal: true, environment: ["LATCHKEY_TEST_SET": "x"])
        #expect(problems.map(\.path) == ["credentials.a.file", "credentials.b.env", "routes[0].upstream.ca_file"])
        #expect(problems.map(\.line) == [2, 3, 7])
        #expect(problems[0].message.contains("No such file"))
        #expect(problems[1].message == "environment variable LATCHKEY_TEST_UNSET is not set")
    }

    @Test func secretNeedsExactlyOneSource() {
        let problems = ConfigTestSupport.problems("""
            credentials:
              none: {}
              two: { env: A, file: /b }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        #expect(problems.map(\.path) == ["credentials.none", "credentials.two"])
        #expect(problems.allSatisfy { $0.expected == "exactly one of value, env, file" })
    }
}
