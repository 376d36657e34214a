import Foundation
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig
import LatchkeyAuth

@Suite("Config store")
struct ConfigStoreTests {
    @Test func withoutTheSectionTheFileStoreAtTheDefaultPlace() throws {
        #expect(try ConfigTestSupport.load(ConfigTestSupport.minimalRoutes).store == TokenStoreSettings(kind: .file, directory: nil, keyFile: nil))
    }

    @Test func pathsAreTakenAgainstTheConfigFilesDirectory() throws {
        let config = try ConfigTestSupport.load("""
            store: { type: file, path: tokens, key_file: /etc/latchkey/store.key }
            """ + "\n" + ConfigTestSupport.minimalRoutes, baseDirectory: "/etc/latchkey")
        #expect(config.store == TokenStoreSettings(kind: .file, directory: "/etc/latchkey/tokens", keyFile: "/etc/latchkey/store.key"))
    }

    @Test func theMemoryStore() throws {
        #expect(try ConfigTestSupport.load("store: { type: memory }\n" + ConfigTestSupport.minimalRoutes).store.kind == .memory)
    }

    @Test func everyStoreProblemIsLocated() {
        let problems = ConfigTestSupport.problems("""
            store:
              type: disk
              path: "~/tokens"
              key_file: ""
              cipher: aes
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        #expect(problems.map(\.description) == [
            "test.yaml:2:9: store.type: unknown store type (expected file (the default), redis or memory)",
            "test.yaml:3:9: store.path: '~' is not expanded (expected an absolute path, or one relative to the config file)",
            "test.yaml:4:13: store.key_file: empty path (expected the file holding the store key)",
            "test.yaml:5:3: store.cipher: unknown key 'cipher' (expected one of type, path, key_file, url, key_prefix, password)",
        ])
    }

    @Test func theMemoryStoreTakesNoPathOrKey() {
        let problems = ConfigTestSupport.problems("store: { type: memory, path: /var/lib/latchkey, key_file: k }\n" + ConfigTestSupport.minimalRoutes)
        #expect(problems.map(\.path) == ["store.path", "store.key_file"])
        #expect(problems.allSatisfy { $0.message == "not used by the memory store" })
    }

    @Test func theRedisStore() throws {
        let config = try ConfigTestSupport.load("""
            store: { type: redis, url: "redis://cache@10.0.0.5:6380/2", key_prefix: "app:", password: { env: REDIS_PASSWORD }, key_file: k, path: state }
            """ + "\n" + ConfigTestSupport.minimalRoutes, baseDirectory: "/etc/latchkey")
        #expect(config.store == TokenStoreSettings(kind: .redis, directory: "/etc/latchkey/state", keyFile: "/etc/latchkey/k", redis: TokenStoreSettings.Redis(
            endpoint: RedisEndpoint(host: "10.0.0.5", port: 6380, database: 2, username: "cache"), keyPrefix: "app:",
            password: .environment("REDIS_PASSWORD"))))
        let defaults = try ConfigTestSupport.load("store: { type: redis, url: redis://localhost }\n" + ConfigTestSupport.minimalRoutes)
        #expect(defaults.store.redis == TokenStoreSettings.Redis(endpoint: RedisEndpoint(host: "localhost", port: 6379, database: 0)))
    }

    @Test func everyRedisStoreProblemIsLocated() {
        let problems = ConfigTestSupport.problems("""
            store:
              type: redis
              path: "~/state"
              password: { value: hunter2 }
              key_prefix: "a b"
            """ + "\n" + ConfigTestSupport.minimalRoutes)
        let messages = Dictionary(uniqueKeysWithValues: problems.map { ($0.path, $0.message) })
        #expect(messages["store.path"] == "'~' is not expanded")
        #expect(messages["store"] == "missing key 'url'")
        #expect(messages["store.password"] == "an inline password would sit in the configuration's text")
        #expect(messages["store.key_prefix"] == "spaces or control characters in the key prefix")
        #expect(problems.map(\.path).sorted() == ["store", "store.key_prefix", "store.password", "store.path"])
        #expect(!problems.map(\.description).joined().contains("hunter2"))
    }

    @Test(arguments: [
        ("redis://:secret@host", "the Redis URL holds a password; give it with store.password"),
        ("rediss://host", "rediss:// (TLS) is not supported"),
        ("http://host", "the URL must start with redis://"),
        ("redis://host:0", "the port must be a number from 1 to 65535"),
        ("redis://host/x", "the path must be a database number"),
        ("redis://host?db=1", "the URL may not have a query or a fragment"),
        ("redis://", "no host"),
    ])
    func aBadRedisURLIsExplained(url: String, message: String) {
        let problems = ConfigTestSupport.problems("store: { type: redis, url: \"\(url)\" }\n" + ConfigTestSupport.minimalRoutes)
        #expect(problems.map(\.path) == ["store.url"])
        #expect(problems.first?.message.hasPrefix(message) == true, "\(problems)")
        #expect(!problems.map(\.description).joined().contains("secret"))
    }

    @Test func redisURLsOfEveryShape() throws {
        #expect(try RedisEndpoint(url: "redis://[::1]:7000/3") == RedisEndpoint(host: "::1", port: 7000, database: 3))
        #expect(try RedisEndpoint(url: "redis://127.0.0.1/") == RedisEndpoint(host: "127.0.0.1"))
        #expect(RedisEndpoint(host: "::1", port: 7000, database: 3, username: "u").description == "redis://u@[::1]:7000/3")
    }

    @Test func anUnreadableKeyFileIsReportedWhenSecretsAreChecked() {
        let yaml = "store: { key_file: /nonexistent/store.key }\n" + ConfigTestSupport.minimalRoutes
        #expect(ConfigTestSupport.problems(yaml, checkExternal: false).isEmpty)
        #expect(ConfigTestSupport.problems(yaml, checkExternal: true).map(\.description)
            == ["test.yaml:1:20: store.key_file: cannot read /nonexistent/store.key (expected a readable file)"])
    }

    @Test func theDefaultDirectoryFollowsTheXDGBaseDirectorySpecification() throws {
        let settings = TokenStoreSettings()
        #expect(try settings.resolvedDirectory(environment: ["XDG_STATE_HOME": "/state", "HOME": "/home/a"]) == "/state/latchkey")
        // A relative XDG_STATE_HOME is invalid and ignored.
        #expect(try settings.resolvedDirectory(environment: ["XDG_STATE_HOME": "state", "HOME": "/home/a"]) == "/home/a/.local/state/latchkey")
        #expect(try settings.resolvedDirectory(environment: ["HOME": "/home/a"]) == "/home/a/.local/state/latchkey")
        #expect(throws: TokenStoreError.self) { try settings.resolvedDirectory(environment: [:]) }
        #expect(try TokenStoreSettings(directory: "/srv/tokens").resolvedDirectory(environment: [:]) == "/srv/tokens")
    }
}
