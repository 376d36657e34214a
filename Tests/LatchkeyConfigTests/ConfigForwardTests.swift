import Foundation
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// `listeners[].mode: forward`, `tunnel`, `inbound.proxy_auth`, and the routes of forward
/// listeners.
@Suite("Config forward listeners")
struct ConfigForwardTests {
    private static let hostRoute = """
        routes:
          - { name: github, host: api.github.com, upstream: https://api.github.com }
        """

    private func load(_ listeners: String, routes: String = ConfigTestSupport.minimalRoutes) throws -> Config {
        try ConfigTestSupport.load("listeners:\n" + listeners + "\n" + routes)
    }

    private func problems(_ listeners: String, routes: String = ConfigTestSupport.minimalRoutes) -> [ConfigProblem] {
        ConfigTestSupport.problems("listeners:\n" + listeners + "\n" + routes)
    }

    @Test func listenersAreReverseByDefault() throws {
        let config = try load("  - { listen: 127.0.0.1:8080 }")
        #expect(config.listeners[0].mode == .reverse)
        #expect(config.listeners[0].tunnel.isEmpty)
        #expect(config.listeners[0].proxyAuth == nil)
    }

    @Test func aForwardListenerWithTunnelsAndAProxyPassword() throws {
        let config = try load("""
              - name: agent
                listen: 127.0.0.1:3128
                mode: forward
                tunnel: [PyPI.org, "*.pythonhosted.org"]
                inbound: { proxy_auth: { env: PROXY_PASSWORD } }
            """)
        let listener = config.listeners[0]
        #expect(listener.mode == .forward)
        #expect(listener.tunnel == [.exact("pypi.org"), .subdomains(of: ".pythonhosted.org")])
        #expect(listener.proxyAuth == .environment("PROXY_PASSWORD"))
        #expect(listener.inbound == .loopbackOnly)
        #expect(listener.tls == nil)
    }

    @Test func proxyAuthGoesWithAnotherInboundCheck() throws {
        let config = try load("""
              - listen: 0.0.0.0:3128
                mode: forward
                inbound: { proxy_auth: { value: pw }, shared_secret: { value: s } }
            """)
        #expect(config.listeners[0].proxyAuth == .inline("pw"))
        #expect(config.listeners[0].inbound == .sharedSecret(header: "X-Latchkey-Secret", secret: .inline("s")))
    }

    @Test func proxyAuthGuardsAReachableListener() throws {
        let config = try load("  - { listen: 0.0.0.0:3128, mode: forward, inbound: { proxy_auth: { file: /run/pw } } }")
        #expect(config.listeners[0].proxyAuth == .file("/run/pw"))
    }

    @Test func aReachableForwardListenerNeedsACheckItCanUse() throws {
        let found = problems("  - { listen: 0.0.0.0:3128, mode: forward }")
        let problem = try #require(found.first)
        #expect(found.count == 1, "\(found)")
        #expect(problem.path == "listeners[0].listen")
        #expect(problem.message.contains("inbound.proxy_auth"))
        #expect(!problem.message.contains("inbound.session"))
    }

    @Test func theProxyPasswordIsASecretHeldLikeTheInboundOne() throws {
        let config = try load("""
              - { name: agent, listen: 127.0.0.1:3128, mode: forward, inbound: { proxy_auth: { value: pw } } }
            """)
        let entry = try #require(config.secretEntries.last)
        #expect(entry.name == Config.proxyAuthSecretName(listener: "agent"))
        #expect(entry.configPath == "listeners[0].inbound.proxy_auth")
        let store = try CredentialStore(config: config, environment: [:])
        #expect(store[Config.proxyAuthSecretName(listener: "agent")] == "pw")
        #expect(store.snapshot.redactionValues == ["pw"])
    }

    @Test func aProxyPasswordFileIsReadAgainWhenItChanges() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("proxy-password")
        try "first\n".write(to: file, atomically: true, encoding: .utf8)
        let config = try load("  - { name: agent, listen: 127.0.0.1:3128, mode: forward, inbound: { proxy_auth: { file: \(file.path) } } }")
        let store = try CredentialStore(config: config, environment: [:])
        let name = Config.proxyAuthSecretName(listener: "agent")
        #expect(store[name] == "first")
        try "second\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(store.reloadIfChanged() == [name])
        #expect(store[name] == "second")
    }

    @Test(arguments: [
        ("mode: sideways", "listeners[0].mode", "unknown mode 'sideways'"),
        ("tunnel: [github.com]", "listeners[0].tunnel", "tunnel on a reverse listener"),
        ("inbound: { proxy_auth: { value: pw } }", "listeners[0].inbound.proxy_auth", "proxy_auth on a reverse listener"),
        ("mode: forward, tunnel: []", "listeners[0].tunnel", "empty list"),
        ("mode: forward, tunnel: [\"*\"]", "listeners[0].tunnel[0]", "open proxy"),
        ("mode: forward, tunnel: [\"*.com\"]", "listeners[0].tunnel[0]", "whole top-level domain"),
        ("mode: forward, tunnel: [github.com:443]", "listeners[0].tunnel[0]", "unexpected port"),
        ("mode: forward, tunnel: [\"*.127.0.0.1\"]", "listeners[0].tunnel[0]", "invalid wildcard host"),
        ("mode: forward, inbound: { proxy_auth: { value: a, env: B } }", "listeners[0].inbound.proxy_auth", "more than one of value, env"),
        ("mode: forward, inbound: { proxy_auth: {} }", "listeners[0].inbound.proxy_auth", "no secret given"),
        ("mode: forward, tls: { local_ca: true }", "listeners[0].tls", "carry TLS inside their CONNECT tunnels"),
        ("mode: forward, allowed_hosts: [api.local]", "listeners[0].allowed_hosts", "target host"),
        ("mode: forward, allowed_origins: [\"http://localhost:3000\"]", "listeners[0].allowed_origins", "target host"),
        ("mode: forward, inbound: { session: { key_file: s.key } }", "listeners[0].inbound.session", "target host"),
        ("mode: forward, inbound: { client_ca_file: ca.pem }", "listeners[0].inbound.client_ca_file", "plain HTTP"),
    ])
    func listenerProblems(_ keys: String, _ path: String, _ message: String) throws {
        let found = problems("  - { listen: 127.0.0.1:3128, \(keys) }")
        let problem = try #require(found.first)
        #expect(found.count == 1, "\(found)")
        #expect(problem.path == path)
        #expect(problem.message.contains(message), "\(problem.message)")
        #expect(problem.description.hasPrefix("test.yaml:2:"))
        #expect(problem.expected != nil)
    }

    @Test func misspelledKeysGetASuggestion() throws {
        let found = problems("  - { listen: 127.0.0.1:3128, mode: forward, tunel: [github.com] }")
        let problem = try #require(found.first)
        #expect(problem.message == "unknown key 'tunel'; did you mean 'tunnel'?")
        let inbound = problems("  - { listen: 127.0.0.1:3128, mode: forward, inbound: { proxy_aut: { value: pw } } }")
        #expect(inbound.contains { $0.message == "unknown key 'proxy_aut'; did you mean 'proxy_auth'?" })
        let secret = problems("  - { listen: 127.0.0.1:3128, mode: forward, inbound: { proxy_auth: { vlaue: pw } } }")
        #expect(Set(secret.map(\.path)) == ["listeners[0].inbound.proxy_auth.vlaue", "listeners[0].inbound.proxy_auth"])
        #expect(secret.contains { $0.message.hasPrefix("unknown key 'vlaue'") })
    }

    @Test func aRouteOfAForwardListenerNamesItsHost() throws {
        let found = problems("  - { name: agent, listen: 127.0.0.1:3128, mode: forward }", routes: """
            routes:
              - { name: github, listeners: [agent], upstream: https://api.github.com }
            """)
        let problem = try #require(found.first)
        #expect(found.count == 1, "\(found)")
        #expect(problem.path == "routes[0]")
        #expect(problem.message.contains("missing key 'host'"))
        #expect(problem.message.contains("target host"))
    }

    @Test func aRouteForEveryListenerNeedsNoHost() throws {
        let config = try load("""
              - { name: main, listen: 127.0.0.1:8080 }
              - { name: agent, listen: 127.0.0.1:3128, mode: forward }
            """, routes: ConfigTestSupport.minimalRoutes)
        #expect(config.routes[0].host == nil)
    }

    /// A forward listener has no allowed_hosts: the target host is what routes it.
    @Test func aForwardListenerTakesAnyRouteHost() throws {
        let config = try load("  - { name: agent, listen: 127.0.0.1:3128, mode: forward }", routes: """
            routes:
              - { name: github, listeners: [agent], host: api.github.com, upstream: https://api.github.com }
              - { name: content, listeners: [agent], host: "*.githubusercontent.com", upstream: https://raw.githubusercontent.com }
            """)
        #expect(config.routes.map(\.host) == ["api.github.com", "*.githubusercontent.com"])
    }

    /// The local CA that intercepts CONNECT is the one `tls: { local_ca: true }` uses:
    /// `ca:`, when given, is checked the same way.
    @Test func theLocalCAsFilesAreChecked() {
        let found = ConfigTestSupport.problems("""
            ca: { cert_file: /nonexistent/ca.pem, key_file: /nonexistent/ca.key }
            listeners:
              - { listen: 127.0.0.1:3128, mode: forward }
            """ + "\n" + Self.hostRoute, checkExternal: true)
        #expect(Set(found.map(\.path)) == ["ca.cert_file", "ca.key_file"])
    }
}
