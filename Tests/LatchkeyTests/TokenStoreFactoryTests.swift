import Foundation
import LatchkeyTestSupport
import LatchkeyConfig
import Testing
@testable import Latchkey
import LatchkeyAuth

@Suite("Token store factory")
struct TokenStoreFactoryTests {
    static let keyText = "q83vEjRWeJq7zN7vASNFZ4mrze8SNFZ4kKvN7wEjRWc="

    /// Removed with the suite's instance, after each test.
    let temporary: TemporaryDirectory
    var state: URL { temporary.url }
    var environment: [String: String] { ["XDG_STATE_HOME": state.path] }
    var storeDirectory: String { state.path + "/latchkey" }

    init() throws {
        temporary = try TemporaryDirectory()
    }

    private func config(_ extra: String = "", identity: String = "{ grant: client_credentials, token_url: https://idp.example/token, client_id: c }") throws -> Config {
        try ConfigTestSupport.load("""
            identities:
              podio: \(identity)
            \(extra)
            routes:
              - { name: api, upstream: https://api.example.com, inject: [{ header: Authorization, identity: podio }] }
            """)
    }

    @Test func theQuickStartKeepsNothingAndCreatesNoDirectory() throws {
        let quick = try Config.quickStart(listen: nil, upstream: "https://api.example.com", headers: ["X-Key: k"], bearerTokenFile: nil)
        #expect(try makeTokenStore(config: quick, environment: environment) is MemoryTokenStore)
        #expect(!FileManager.default.fileExists(atPath: storeDirectory))
    }

    @Test func aRedisStoreThatCannotBeReachedStillOpensUnavailable() throws {
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let config = try config("store: { type: redis, url: \"redis://127.0.0.1:1/0\", password: { env: LK_TEST_REDIS_PASSWORD } }")
        let store = try #require(try makeTokenStore(config: config, environment: ["LK_TEST_REDIS_PASSWORD": "pw"]) as? RedisTokenStore)
        #expect(store.endpoint == RedisEndpoint(host: "127.0.0.1", port: 1))
        guard case .unavailable(let reason) = store.availability else {
            Issue.record("a refused connection counts as available")
            return
        }
        #expect(reason.hasPrefix("cannot connect to redis://127.0.0.1:1/0: "))
        #expect(!FileManager.default.fileExists(atPath: storeDirectory))
    }

    @Test func withRedisTheRouteIdentitiesStayInAFileInTheStoreDirectory() throws {
        let redis = "store: { type: redis, url: \"redis://127.0.0.1:1/0\" }"
        let file = try #require(try openRouteIdentityFile(config: try config(redis), environment: environment))
        #expect(file.path == storeDirectory + "/" + RouteIdentityFile.fileName)
        let chosen = state.path + "/chosen"
        let configured = try #require(try openRouteIdentityFile(config: try config(redis.replacingOccurrences(of: " }", with: ", path: \(chosen) }")),
                                                                environment: environment))
        #expect(configured.path == chosen + "/" + RouteIdentityFile.fileName)
        #expect(try openRouteIdentityFile(config: try config("store: { type: memory }"), environment: environment) == nil)
    }

    @Test func aRedisPasswordThatCannotBeReadStopsTheStart() throws {
        let config = try config("store: { type: redis, url: \"redis://127.0.0.1:1/0\", password: { env: LK_TEST_REDIS_PASSWORD } }")
        let error = try #require(throws: TokenStoreError.self) { try makeTokenStore(config: config, environment: [:]) }
        #expect(error.message == "cannot read store.password: environment variable LK_TEST_REDIS_PASSWORD is not set")
    }

    @Test func aStaticIdentityWhoseCookiesTheProxyKeepsHasAStore() throws {
        let config = try ConfigTestSupport.load("""
            identities:
              bc: { grant: static, token: { value: t } }
            routes:
              - { name: web, upstream: https://app.example.com, jar: proxy, inject: [{ header: Authorization, identity: bc }] }
            """)
        #expect(config.identitiesKeepingCookies == ["bc"])
        #expect(try makeTokenStore(config: config, environment: environment) is FileTokenStore)
    }

    @Test func staticTokensAloneNeedNoStore() throws {
        let config = try config(identity: "{ grant: static, token: { value: t } }")
        #expect(try makeTokenStore(config: config, environment: environment) is MemoryTokenStore)
        #expect(!FileManager.default.fileExists(atPath: storeDirectory))
    }

    @Test func theMemoryStoreWhenConfigured() throws {
        #expect(try makeTokenStore(config: try config("store: { type: memory }"), environment: environment) is MemoryTokenStore)
        #expect(!FileManager.default.fileExists(atPath: storeDirectory))
    }

    @Test func anOAuthIdentityGetsTheFileStoreInTheStateDirectory() async throws {
        let store = try #require(try makeTokenStore(config: try config(), environment: environment) as? FileTokenStore)
        #expect(store.directory == storeDirectory)
        try await store.save(TokenSet(accessToken: "lk-at", obtainedAt: Date()), identity: "podio")
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: storeDirectory + "/podio.json")), as: UTF8.self).contains("lk-at"))
    }

    @Test func theKeyFromTheEnvironmentSealsTheFiles() async throws {
        var environment = self.environment
        environment["LATCHKEY_STORE_KEY"] = Self.keyText
        let store = try makeTokenStore(config: try config(), environment: environment)
        try await store.save(TokenSet(accessToken: "lk-at", obtainedAt: Date()), identity: "podio")
        #expect(!String(decoding: try Data(contentsOf: URL(fileURLWithPath: storeDirectory + "/podio.json")), as: UTF8.self).contains("lk-at"))
        // Opened again without the key: a clear error, not an empty store.
        let error = try #require(throws: TokenStoreError.self) { try makeTokenStore(config: try config(), environment: self.environment) }
        #expect(error.code == .keyMissing)
    }

    @Test func theConfiguredPathAndKeyFile() throws {
        let keyFile = state.appendingPathComponent("store.key").path
        try Data(Self.keyText.utf8).write(to: URL(fileURLWithPath: keyFile))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
        let config = try config("store: { path: \(state.path)/tokens, key_file: \(keyFile) }")
        let error = try #require(throws: TokenStoreError.self) { try makeTokenStore(config: config, environment: [:]) }
        #expect(error.message == "key file \(keyFile) is accessible by others (mode 0644); run chmod 600 \(keyFile)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
        let store = try #require(try makeTokenStore(config: config, environment: [:]) as? FileTokenStore)
        #expect(store.directory == state.path + "/tokens")
    }
}
