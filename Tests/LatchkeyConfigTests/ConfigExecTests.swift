import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// The configuration `latchkey exec` runs: its own loopback listeners instead of the
/// file's, and the quick start by host.
@Suite("Exec configuration")
struct ConfigExecTests {
    let file = Config(
        listeners: [
            ListenerConfig(name: "fwd", address: .tcp(host: "127.0.0.1", port: 3128), mode: .forward,
                           tunnel: [HostPattern("github.com")], proxyAuth: .environment("PROXY_PASSWORD")),
            ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080),
                           inbound: .sharedSecret(header: "X-Secret", secret: .environment("INBOUND"))),
        ],
        routes: [
            RouteConfig(name: "api", listeners: ["fwd"], host: "api.test", upstream: UpstreamConfig(url: "https://api.test")),
            RouteConfig(name: "local", listeners: ["main"], pathPrefix: "/local", upstream: UpstreamConfig(url: "http://127.0.0.1:9000")),
        ],
        credentials: ["api": .environment("API_TOKEN")]
    )

    @Test func execListensOnFreeLoopbackPortsWithItsPasswordAndTheFilesTunnels() {
        let config = file.forExec(proxySecret: "pw", tunnel: [HostPattern("*.example.org"), HostPattern("github.com")])
        #expect(config.listeners.map(\.name) == ["exec", "exec-reverse"])
        let forward = config.listeners[0]
        #expect(forward.mode == .forward && forward.address == .tcp(host: "127.0.0.1", port: 0))
        #expect(forward.proxyAuth == .inline("pw"))
        #expect(forward.tunnel == [HostPattern("github.com"), HostPattern("*.example.org")])
        #expect(config.listeners[1].mode == .reverse && config.listeners[1].inbound == .loopbackOnly)
        #expect(config.routes.allSatisfy { $0.listeners.isEmpty })
    }

    @Test func withEveryRouteNamingAHostThereIsNoReverseListener() {
        var hosts = file
        hosts.routes.removeLast()
        #expect(hosts.forExec(proxySecret: "pw", tunnel: []).listeners.map(\.name) == ["exec"])
    }

    @Test func theFilesSecretVariablesAreKnown() {
        #expect(file.secretEnvironmentVariables == ["API_TOKEN", "PROXY_PASSWORD", "INBOUND"])
    }

    @Test func aQuickStartRouteServesEachHost() throws {
        let config = try Config.quickStart(hosts: ["API.example.com", "uploads.example.com"], upstream: nil, headers: ["X-Key: k1"],
                                           bearerTokenFile: nil)
        #expect(config.listeners.isEmpty)
        #expect(config.routes.map(\.host) == ["api.example.com", "uploads.example.com"])
        #expect(config.routes.map(\.upstream.url) == ["https://api.example.com", "https://uploads.example.com"])
        #expect(config.routes.allSatisfy { $0.injections.count == 1 })
        let local = try Config.quickStart(hosts: ["api.test"], upstream: "http://127.0.0.1:9000", headers: [], bearerTokenFile: nil)
        #expect(local.routes.first?.upstream.url == "http://127.0.0.1:9000")
    }

    @Test func quickStartProblemsNameTheirFlags() {
        #expect(throws: ConfigErrors.self) { try Config.quickStart(hosts: [], upstream: nil, headers: [], bearerTokenFile: nil) }
        do {
            _ = try Config.quickStart(hosts: ["https://api.example.com", "ok.example"], upstream: "ftp://x", headers: ["nocolon"],
                                      bearerTokenFile: nil)
            Issue.record("the problems are reported")
        } catch {
            #expect(error.problems.map(\.path) == ["--upstream", "--header #1", "--host #1"])
        }
    }

    @Test func tunnelFlagsAreCheckedLikeTheKey() throws {
        #expect(try Config.tunnelPatterns(["github.com", "*.githubusercontent.com"]) == [HostPattern("github.com"), HostPattern("*.githubusercontent.com")])
        for open in ["*", "*.*", "*.com"] {
            #expect(throws: ConfigErrors.self) { try Config.tunnelPatterns([open]) }
        }
    }
}
