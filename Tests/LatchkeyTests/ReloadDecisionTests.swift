import LatchkeyTestSupport
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct ReloadDecisionTests {
    typealias Support = ReloadTestSupport

    static func load(_ yaml: String) throws -> Config {
        try ConfigTestSupport.load(yaml)
    }

    /// Two listeners, a credential and a route, and `extra` top-level YAML.
    static func document(main: String = "127.0.0.1:8080", second: String = "pod", upstream: String = "https://api.example.com",
                         server: String = "{ loops: 2, grace_period: 10s }", extra: String = "") -> String {
        """
        listeners:
          - { name: main, listen: "\(main)" }
          - { name: \(second), listen: "0.0.0.0:8443", inbound: { shared_secret: { header: X-Proxy-Key, value: abc } } }
        credentials:
          key: { value: k }
        routes:
          - name: api
            upstream: \(upstream)
            inject: [{ header: X-Key, credential: key }]
        server: \(server)
        \(extra)
        """
    }

    static let running = document()

    static func refusal(_ yaml: String) throws -> [String] {
        switch ReloadDecision(running: try load(running), loaded: try load(yaml), file: "/etc/latchkey.yaml") {
        case .refuse(let problems): problems.map(\.description)
        case .apply: []
        }
    }

    @Test func whatReachesOnlyNewRequestsIsApplied() throws {
        let loaded = try Self.load("""
            listeners:
              - { name: main, listen: "127.0.0.1:8080", allowed_hosts: [proxy.local] }
              - { name: pod, listen: "0.0.0.0:8443", inbound: { shared_secret: { header: X-Other-Key, value: def } } }
            credentials:
              key: { value: rotated }
              more: { value: m }
            routes:
              - name: web
                path: /web
                upstream: https://web.example.com
              - name: api
                upstream: https://api2.example.com
                inject: [{ header: X-Key, credential: more }]
            server: { loops: 2, grace_period: 30s }
            limits: { max_connections: 10, head_timeout: 2s }
            logging: { access_log: false }
            """)
        let decision = ReloadDecision(running: try Self.load(Self.running), loaded: loaded, file: "latchkey.yaml")
        #expect(decision == .apply(ConfigChanges(identities: IdentityChanges(), routes: RouteChanges(added: ["web"], changed: ["api"]),
                                                 opensTokenStore: false)))
    }

    @Test func eachKeyThatNeedsARestartIsNamedWithItsRunningValue() throws {
        let problems = try Self.refusal(Self.document(main: "127.0.0.1:9090", second: "public", upstream: "https://other.example.com",
                                                      server: "{ loops: 4 }", extra: "logging: { level: debug, format: json }"))
        #expect(problems == [
            "/etc/latchkey.yaml: server.loops: changes only with a restart (running: 2)",
            "/etc/latchkey.yaml: listeners[0].listen: changes only with a restart (running: 127.0.0.1:8080)",
            "/etc/latchkey.yaml: listeners[1].name: changes only with a restart (running: pod)",
            "/etc/latchkey.yaml: logging.level: changes only with a restart (running: info)",
            "/etc/latchkey.yaml: logging.format: changes only with a restart (running: text)",
        ])
    }

    @Test func turningTLSOnOrOffNeedsARestart() throws {
        let tls = Self.running.replacingOccurrences(of: #"listen: "127.0.0.1:8080" }"#, with: #"listen: "127.0.0.1:8080", tls: { local_ca: true } }"#)
        #expect(tls != Self.running)
        let problems = try Self.refusal(tls)
        #expect(problems == ["/etc/latchkey.yaml: listeners[0].tls: changes only with a restart (running: none, plain HTTP)"])
    }

    @Test func aTLSListenersCertificateChangesOnReloadItsHandshakeTimeoutDoesNot() throws {
        func config(_ tls: String) throws -> Config {
            try Self.load(Self.running.replacingOccurrences(of: #"listen: "127.0.0.1:8080" }"#, with: #"listen: "127.0.0.1:8080", tls: \#(tls) }"#))
        }
        let running = try config("{ local_ca: true }")
        let files = try config("{ cert_file: /etc/tls/cert.pem, key_file: /etc/tls/key.pem }")
        guard case .apply = ReloadDecision(running: running, loaded: files, file: "f.yaml") else {
            Issue.record("new certificate files must not need a restart")
            return
        }
        let slower = try config("{ local_ca: true, handshake_timeout: 30s }")
        guard case .refuse(let problems) = ReloadDecision(running: running, loaded: slower, file: "f.yaml") else {
            Issue.record("a new handshake timeout needs a restart")
            return
        }
        #expect(problems.map(\.description) == ["f.yaml: listeners[0].tls.handshake_timeout: changes only with a restart (running: 10s)"])
    }

    @Test func addingOrRemovingAListenerNeedsARestart() throws {
        let problems = try Self.refusal("""
            listeners:
              - { name: main, listen: "127.0.0.1:8080" }
            credentials:
              key: { value: k }
            routes:
              - name: api
                upstream: https://api.example.com
                inject: [{ header: X-Key, credential: key }]
            server: { loops: 2 }
            """)
        #expect(problems == ["/etc/latchkey.yaml: listeners: changes only with a restart (running: main, pod)"])
    }

    @Test func theTokenStoreNeedsARestartWhileIdentitiesKeepTheirTokensInIt() throws {
        func store(_ store: String, identities: [String] = [Support.identity("alice")]) throws -> Config {
            try Support.config(identities: identities, routes: [Support.route("a", identity: identities.isEmpty ? nil : "alice")], extra: store)
        }
        let running = try store("store: { type: file, path: /var/lib/latchkey }")
        let moved = try store("store: { type: file, path: /srv/latchkey, key_file: /etc/latchkey/key }")
        guard case .refuse(let problems) = ReloadDecision(running: running, loaded: moved, file: "f.yaml") else {
            Issue.record("a moved store must need a restart")
            return
        }
        #expect(problems.map(\.description) == [
            "f.yaml: store.path: changes only with a restart (running: /var/lib/latchkey)",
            "f.yaml: store.key_file: changes only with a restart (running: none)",
        ])

        // Nothing kept there, so nothing open: the reload opens the one the file names.
        let unused = try store("store: { type: file, path: /var/lib/latchkey }", identities: [])
        #expect(ReloadDecision(running: unused, loaded: moved, file: "f.yaml") == .apply(ConfigChanges(
            identities: IdentityChanges(added: ["alice"]), routes: RouteChanges(changed: ["a"]), opensTokenStore: true)))
    }

    @Test func theRedisPasswordIsNamedNeverShown() throws {
        func redis(_ password: String) throws -> Config {
            try Support.config(identities: [Support.identity("alice")], routes: [Support.route("a", identity: "alice")],
                               extra: "store: { type: redis, url: \"redis://10.0.0.5:6379/0\", password: { env: \(password) } }")
        }
        guard case .refuse(let problems) = ReloadDecision(running: try redis("OLD_PASSWORD"), loaded: try redis("NEW_PASSWORD"), file: "f.yaml") else {
            Issue.record("another Redis password must need a restart")
            return
        }
        #expect(problems.map(\.description) == ["f.yaml: store.password: changes only with a restart (running: not shown)"])
    }
}
