import Foundation
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

@Suite("Config validation")
struct ConfigValidationTests {
    private func listenerProblems(_ listener: String) -> [ConfigProblem] {
        ConfigTestSupport.problems("listeners:\n" + listener + "\n" + ConfigTestSupport.minimalRoutes)
    }

    @Test(arguments: ["0.0.0.0:8080", "[::]:8080", "192.168.1.20:8080", "10.0.0.1:0"])
    func nonLoopbackListenerWithoutInboundIsRefused(_ address: String) throws {
        let problems = listenerProblems("  - listen: \"\(address)\"")
        let problem = try #require(problems.first)
        #expect(problems.count == 1)
        #expect(problem.path == "listeners[0].listen")
        #expect(problem.line == 2)
        #expect(problem.message.contains("inbound.shared_secret"))
        #expect(problem.message.contains("inbound.open: true"))
    }

    @Test(arguments: ["127.0.0.1:8080", "127.1.2.3:9000", "[::1]:8080", "localhost:8080", "8080", "unix:/tmp/latchkey.sock", "[::ffff:127.0.0.1]:80"])
    func loopbackAndUnixListenersNeedNoInbound(_ address: String) {
        #expect(listenerProblems("  - listen: \"\(address)\"").isEmpty)
    }

    @Test func openOrSharedSecretAllowsAReachableListener() throws {
        let config = try ConfigTestSupport.load("""
            listeners:
              - { name: open, listen: 0.0.0.0:8080, inbound: { open: true } }
              - name: guarded
                listen: "[::]:8081"
                inbound: { shared_secret: { env: INBOUND } }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        #expect(config.listeners.map(\.inbound) == [.open, .sharedSecret(header: "X-Latchkey-Secret", secret: .environment("INBOUND"))])
        #expect(config.listeners[1].address == .tcp(host: "::", port: 8081))
    }

    @Test func inboundOpenFalseIsNotEnough() {
        let problems = listenerProblems("  - { listen: 0.0.0.0:8080, inbound: { open: false } }")
        #expect(problems.map(\.path) == ["listeners[0].listen"])
    }

    @Test func inboundCannotBeBothOpenAndShared() {
        let problems = listenerProblems("  - { listen: 0.0.0.0:8080, inbound: { open: true, shared_secret: { value: x } } }")
        #expect(problems.map(\.path).contains("listeners[0].inbound"))
    }

    @Test(arguments: ["example.com:8080", "127.0.0.1", "127.0.0.1:70000", "unix:", "[::1", ":8080"])
    func invalidListenAddresses(_ address: String) {
        let problems = listenerProblems("  - listen: \"\(address)\"")
        #expect(problems.map(\.path) == ["listeners[0].listen"], "\(address)")
    }

    @Test func listenerNamesAndAddressesAreUnique() {
        let problems = ConfigTestSupport.problems("""
            listeners:
              - { listen: 127.0.0.1:8080 }
              - { listen: 127.0.0.1:8080 }
              - { name: other, listen: 127.0.0.1:0 }
              - { name: another, listen: 127.0.0.1:0 }
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        #expect(problems.count == 2)
        #expect(problems.allSatisfy { $0.path == "listeners[1].listen" })
    }

    @Test func routeReferencesMustExist() {
        let problems = ConfigTestSupport.problems("""
            listeners:
              - { name: main, listen: 127.0.0.1:8080 }
            credentials:
              github: { value: abc }
            routes:
              - name: api
                listeners: [main, admin]
                upstream: https://api.example.com
                inject:
                  - { header: Authorization, value: "Bearer {token}", credential: githb }
                  - { header: X-Other }
            """)
        #expect(problems.map(\.path) == ["routes[0].listeners[1]", "routes[0].inject[0].credential", "routes[0].inject[1]"])
        #expect(problems[0].expected == "one of main")
        #expect(problems[1].message.contains("did you mean 'github'"))
        #expect(problems[2].message == "missing key 'credential' or 'identity'")
    }

    @Test func routeNamesAreUniqueAndMatchesUnambiguous() {
        let problems = ConfigTestSupport.problems("""
            routes:
              - { name: a, path: /x, upstream: https://a.example }
              - { name: a, path: /y, upstream: https://a.example }
              - { name: c, path: /x/, upstream: https://c.example }
              - { path: /z, upstream: https://c.example }
              - { path: /z, upstream: https://c.example }
            """)
        #expect(problems.map(\.path) == ["routes[1].name", "routes[2].path", "routes[4].path", "routes[4].path"])
        #expect(problems[0].message.contains("duplicate route name 'a'"))
        #expect(problems[1].message.contains("routes[0]"))
    }

    @Test(arguments: [
        ("ftp://example.com", "unsupported URL scheme"),
        ("https://example.com/?a=1", "query"),
        ("https://example.com/#top", "fragment"),
        ("https://user:pw@example.com", "user name or password"),
        ("https:///path", "no host"),
        ("example.com", "not a valid URL"),
        ("https://exa mple.com", "spaces"),
    ])
    func upstreamURLRules(_ url: String, _ fragment: String) throws {
        let problems = ConfigTestSupport.problems("routes:\n  - { name: a, upstream: \"\(url)\" }\n")
        let problem = try #require(problems.first)
        #expect(problems.count == 1)
        #expect(problem.path == "routes[0].upstream")
        #expect(problem.message.contains(fragment), "\(problem.message)")
    }

    @Test func pathMustStartWithSlash() {
        let problems = ConfigTestSupport.problems("routes:\n  - { name: a, path: api, upstream: https://a.example }\n")
        #expect(problems.map(\.path) == ["routes[0].path"])
    }

    @Test(arguments: ["Host", "content-length", "Transfer-Encoding", "Connection", "TE", "Upgrade", "Proxy-Authorization", "Bad Header", "X:Y", ""])
    func forbiddenOrInvalidHeaderNames(_ name: String) {
        let problems = ConfigTestSupport.problems("""
            credentials: { k: { value: abc } }
            routes:
              - name: a
                upstream: https://a.example
                inject: [{ header: "\(name)", credential: k }]
            """)
        #expect(problems.map(\.path) == ["routes[0].inject[0].header"], "\(name)")
    }

    @Test func injectionNeedsExactlyOneTargetAndNoDuplicates() {
        let problems = ConfigTestSupport.problems("""
            credentials: { k: { value: abc } }
            routes:
              - name: a
                upstream: https://a.example
                inject:
                  - { header: X-A, query: a, credential: k }
                  - { credential: k }
                  - { header: X-B, credential: k }
                  - { header: x-b, credential: k }
                  - { query: "a&b", credential: k }
                  - { cookie: "a b", credential: k }
            """)
        #expect(problems.map(\.path) == [
            "routes[0].inject[0]", "routes[0].inject[1]", "routes[0].inject[3]", "routes[0].inject[4].query", "routes[0].inject[5].cookie",
        ])
    }

    @Test func templatesAreCheckedWithTheirLine() {
        let problems = ConfigTestSupport.problems("""
            credentials: { k: { value: abc } }
            routes:
              - name: a
                upstream: https://a.example
                inject:
                  - { header: X-A, value: "Bearer {token} {token}", credential: k }
                  - { header: X-B, value: "{user}", credential: k }
                  - { header: X-C, value: "OAuth2 {access_token}", credential: k }
            """)
        #expect(problems.map(\.path) == ["routes[0].inject[0].value", "routes[0].inject[1].value"])
        #expect(problems.map(\.line) == [6, 7])
    }

    @Test func routeHostMustBeAcceptedByAListener() {
        let problems = ConfigTestSupport.problems("""
            listeners:
              - { name: main, listen: 127.0.0.1:8080, allowed_hosts: [api.local] }
            routes:
              - { name: a, host: api.local, upstream: https://a.example }
              - { name: b, host: other.local, upstream: https://b.example }
              - { name: c, host: localhost, path: /c, upstream: https://c.example }
              - { name: d, host: "bad host", path: /d, upstream: https://c.example }
            """)
        #expect(problems.map(\.path) == ["routes[1].host", "routes[3].host"])
    }

    @Test func wildcardAllowedHostAcceptsAnyRouteHost() throws {
        let config = try ConfigTestSupport.load("""
            listeners:
              - { name: pod, listen: 0.0.0.0:8080, allowed_hosts: ["*"], inbound: { open: true } }
            routes:
              - { name: a, host: billing.svc, upstream: https://a.example }
            """)
        #expect(config.listeners[0].allowedHosts == ["*"])
        #expect(config.routes[0].host == "billing.svc")
    }

    /// `*.example.com` in a route's host and in allowed_hosts; a route's wildcard must meet
    /// a name the listener takes, and a wildcard must be over a domain name.
    @Test func wildcardHostsUnderADomain() {
        let problems = ConfigTestSupport.problems("""
            listeners:
              - { name: main, listen: 127.0.0.1:8080, allowed_hosts: ["*.example.com", "api.corp.test"] }
            routes:
              - { name: a, host: "*.example.com", upstream: https://a.example }
              - { name: b, host: uploads.example.com, path: /b, upstream: https://b.example }
              - { name: c, host: "*.corp.test", path: /c, upstream: https://c.example }
              - { name: d, host: "*.other.test", path: /d, upstream: https://d.example }
              - { name: e, host: "*.127.0.0.1", path: /e, upstream: https://e.example }
              - { name: f, host: "*", path: /f, upstream: https://f.example }
            """)
        #expect(problems.map(\.path) == ["routes[3].host", "routes[4].host", "routes[5].host"])
    }

    @Test func limitsAndLoggingRanges() {
        let problems = ConfigTestSupport.problems(ConfigTestSupport.minimalRoutes + """

            server: { loops: 0 }
            limits: { max_headers: 0, max_connections: -1, head_timeout: 0s }
            logging: { level: chatty, format: xml }
            """)
        #expect(problems.map(\.path) == [
            "server.loops", "limits.max_headers", "limits.max_connections", "limits.head_timeout", "logging.level", "logging.format",
        ])
    }

    @Test func bodyTimeoutIsReadAndMustBePositive() throws {
        let config = try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes + "\nlimits: { body_timeout: 90s }\n")
        #expect(config.limits.bodyTimeout == .seconds(90))
        #expect(try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes).limits.bodyTimeout == .seconds(60))
        let problems = ConfigTestSupport.problems(ConfigTestSupport.minimalRoutes + "\nlimits: { body_timeout: 0s }\n")
        #expect(problems.map(\.path) == ["limits.body_timeout"])
    }

    /// A user may paste a secret anywhere; no message may echo it.
    @Test func messagesNeverContainTheSecret() throws {
        let secret = "SUPERSECRET-7f3a9"
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let twoLines = directory.appendingPathComponent("two-lines")
        try "\(secret)\n\(secret)\n".write(to: twoLines, atomically: true, encoding: .utf8)
        let problems = ConfigTestSupport.problems("""
            listeners:
              - name: main
                listen: \(secret)
                inbound: { shared_secret: { value: \(secret), env: \(secret) } }
            credentials:
              scalar: \(secret)
              list: { value: [\(secret)] }
              broken: { value: "\(secret)\\n\(secret)" }
              file: { file: \(twoLines.path) }
              env: { env: MULTILINE }
              map: { value: { \(secret): \(secret) } }
            routes:
              - name: a
                upstream: https://user:\(secret)@example.com/?key=\(secret)
                host: \(secret)@host
                path: /\(secret) x
                inject:
                  - { header: Authorization, value: "Bearer \(secret)", credential: scalar }
                  - { header: X-Key, value: "{\(secret)}", credential: list }
                  - { header: X-Other, value: "{token}", credential: \(secret) }
                  - { query: "\(secret)&", credential: map }
                upstream_typo: \(secret)
            limits: { max_headers: \(secret), head_timeout: \(secret) }
            logging: { level: \(secret) }
            """, checkExternal: true, environment: ["MULTILINE": "\(secret)\n\(secret)"])
        #expect(problems.count >= 15)
        for problem in problems {
            #expect(!problem.description.contains("SUPERSECRET"), "\(problem.description)")
        }
    }
}
