import Foundation
import LatchkeyTestSupport
import Testing
@testable import Latchkey
import LatchkeyConfig

@Suite struct ConfigSessionTests {
    private func listener(_ inbound: String, listen: String = "0.0.0.0:8080") -> String {
        """
        listeners:
          - { name: lan, listen: "\(listen)", inbound: \(inbound) }
        """ + "\n" + ConfigTestSupport.minimalRoutes
    }

    @Test func aSessionIsEnoughForAReachableListener() throws {
        let config = try ConfigTestSupport.load(listener(
            "{ session: { key_file: /etc/lk/session.key, previous_key_files: [old.key], lifetime: 1h, link_lifetime: 2m } }"),
            baseDirectory: "/etc/lk")
        #expect(config.listeners[0].inbound == .session(SessionSettings(
            keyFile: "/etc/lk/session.key", previousKeyFiles: ["/etc/lk/old.key"], lifetime: .seconds(3600), linkLifetime: .seconds(120))))
        let defaults = try ConfigTestSupport.load(listener("{ session: { key_file: /k } }"))
        #expect(defaults.listeners[0].inbound == .session(SessionSettings(keyFile: "/k")))
    }

    @Test(arguments: [
        ("{ session: {} }", "listeners[0].inbound.session", "missing key 'key_file'"),
        ("{ session: { key_file: /k, lifetime: 0s } }", "listeners[0].inbound.session.lifetime", "longer than zero"),
        ("{ session: { key_file: \"~/k\" } }", "listeners[0].inbound.session.key_file", "'~' is not expanded"),
        ("{ session: { key_file: /k }, open: true }", "listeners[0].inbound", "more than one check (session, open: true)"),
    ])
    func badSessionsAreExplained(_ inbound: String, _ path: String, _ message: String) throws {
        let problems = ConfigTestSupport.problems(listener(inbound, listen: "127.0.0.1:8080"))
        let problem = try #require(problems.first)
        #expect(problem.path == path)
        #expect(problem.message.contains(message), "\(problem.message)")
    }

    private func keyFile(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("session.key").path
        try Data((Data((0..<32).map { UInt8($0) }).base64EncodedString() + "\n").utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        return path
    }

    @Test func theLinkGoesToTheListenersHostAndPort() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try keyFile(in: directory)
        var config = try ConfigTestSupport.load("""
            listeners:
              - { name: lan, listen: "0.0.0.0:8443", allowed_hosts: [laptop.local], inbound: { session: { key_file: \(key) } } }
              - { name: local, listen: "127.0.0.1:8080" }
            routes:
              - { name: web, path: /web, upstream: "https://app.example" }
              - { name: api, path: /api, upstream: "https://api.example", listeners: [local] }
            """)
        let link = try config.loginLink(route: "web", listener: nil, host: nil, now: Date())
        #expect(link.hasPrefix("http://laptop.local:8443/.latchkey/login?token=link."))
        #expect(try config.loginLink(route: "web", listener: nil, host: "10.0.0.5:8443", now: Date()).hasPrefix("http://10.0.0.5:8443/"))
        #expect(throws: RuntimeError.self) { try config.loginLink(route: "api", listener: nil, host: nil, now: Date()) }
        #expect(throws: RuntimeError.self) { try config.loginLink(route: "nope", listener: nil, host: nil, now: Date()) }
        config.listeners[0].tls = ListenerTLSConfig(certificate: .localCA)
        #expect(try config.loginLink(route: "web", listener: nil, host: nil, now: Date()).hasPrefix("https://laptop.local:8443/"))
        config.listeners[0].allowedHosts = []
        do {
            _ = try config.loginLink(route: "web", listener: nil, host: nil, now: Date())
            Issue.record("a wildcard listener without a host")
        } catch {
            #expect(error.description.contains("--host"))
        }
    }
}
