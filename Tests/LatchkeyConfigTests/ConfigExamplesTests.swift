import Foundation
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig
import LatchkeyAuth

@Suite("Config examples")
struct ConfigExamplesTests {
    static let exampleFiles: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: ConfigTestSupport.configsDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted()
    }()

    @Test func theExamplesExist() {
        for required in ["latchkey.example.yaml", "github.yaml", "tmdb-apikey.yaml", "sidecar.yaml"] {
            #expect(Self.exampleFiles.contains(required), "missing Configs/\(required)")
        }
    }

    @Test(arguments: exampleFiles)
    func exampleLoadsAndValidates(_ name: String) throws {
        let path = ConfigTestSupport.configsDirectory.appendingPathComponent(name).path
        // The examples name secrets this machine does not hold: check structure only.
        let config = try ConfigLoader.load(path: path, options: .init(checkExternal: false))
        #expect(!config.listeners.isEmpty)
        #expect(!config.routes.isEmpty)
    }

    @Test func githubInjectsABearerHeader() throws {
        let config = try load("github.yaml")
        let route = try #require(config.routes.first)
        #expect(route.pathPrefix == "/github")
        #expect(route.upstream.url == "https://api.github.com")
        #expect(route.injections == [Injection(target: .header("Authorization"), source: .credential("github"), template: CredentialTemplate(prefix: "Bearer "))])
        #expect(config.credentials["github"] == .file("/run/secrets/github-token"))
        #expect(config.listeners == [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))])
    }

    @Test func tmdbInjectsTheApiKeyQueryParameter() throws {
        let config = try load("tmdb-apikey.yaml")
        let route = try #require(config.routes.first)
        #expect(route.injections == [Injection(target: .query("api_key"), source: .credential("tmdb"), template: .token)])
        #expect(route.secretQueryParameters == ["session_id"])
        #expect(config.credentials["tmdb"] == .environment("TMDB_API_KEY"))
    }

    @Test func replicasShareTheirIdentityThroughRedis() throws {
        let config = try load("replicas.yaml")
        #expect(config.store.kind == .redis)
        #expect(config.store.redis == TokenStoreSettings.Redis(
            endpoint: RedisEndpoint(host: "redis.default.svc.cluster.local"), keyPrefix: "latchkey:reports:",
            password: .file("/var/run/secrets/redis/password")))
        #expect(config.store.keyFile == "/var/run/secrets/latchkey/store.key")
        #expect(config.routes.first?.identity == "reports")
    }

    @Test func sidecarHasAGuardedPodListenerAUnixSocketAndAListenerForMetrics() throws {
        let config = try load("sidecar.yaml")
        #expect(config.listeners.count == 3)
        #expect(config.listeners[0].address == .tcp(host: "0.0.0.0", port: 8080))
        #expect(config.listeners[0].inbound == .sharedSecret(header: "X-Latchkey-Secret", secret: .file("/var/run/secrets/latchkey/inbound")))
        #expect(config.listeners[1].address == .unix(path: "/var/run/latchkey/latchkey.sock"))
        #expect(config.listeners[1].inbound == .loopbackOnly)
        #expect(config.listeners[2].address == .tcp(host: "0.0.0.0", port: 9090))
        #expect(config.listeners[2].inbound == .open)
        // No route serves the metrics listener: it spends no credential.
        #expect(config.routes.allSatisfy { $0.listeners == ["pod", "socket"] })
        #expect(config.routes[0].upstream.options.http2)
        #expect(config.routes[0].upstream.options.connectTimeout == .seconds(2))
        #expect(config.limits.maxRequestBodyBytes == 10 * 1024 * 1024)
        #expect(config.logging.format == .json)
        let names = config.secretEntries.map(\.name)
        #expect(names == ["billing", Config.inboundSecretName(listener: "pod")])
    }

    @Test func referenceSpellsOutTheDefaults() throws {
        let config = try load("latchkey.example.yaml")
        #expect(config.server == ServerSettings(loops: 2, gracePeriod: .seconds(10)))
        #expect(config.limits == Limits())
        #expect(config.logging == LoggingSettings())
        #expect(config.store == TokenStoreSettings())
        let github = try #require(config.routes.first { $0.name == "github" })
        #expect(github.cookies == CookieRewrite())
        #expect(github.upstream == UpstreamConfig(url: "https://api.github.com"))
        #expect(github.prefixReplacement == "")
        #expect(github.listeners == ["main"])
    }

    /// Every key of every mapping appears in the reference, set or commented.
    @Test func referenceMentionsEveryKey() throws {
        let text = try String(contentsOf: ConfigTestSupport.configsDirectory.appendingPathComponent("latchkey.example.yaml"), encoding: .utf8)
        for key in ConfigKeys.inReference {
            #expect(text.contains("\(key):") || text.contains("{ \(key):"), "the reference does not mention \(key)")
        }
    }

    private func load(_ name: String) throws -> Config {
        try ConfigLoader.load(
            path: ConfigTestSupport.configsDirectory.appendingPathComponent(name).path,
            options: .init(checkExternal: false)
        )
    }
}
