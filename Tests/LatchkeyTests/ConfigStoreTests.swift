import Foundation
import Testing
@testable import Latchkey
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
            "test.yaml:2:9: store.type: unknown store type (expected file (the default) or memory)",
            "test.yaml:3:9: store.path: '~' is not expanded (expected an absolute path, or one relative to the config file)",
            "test.yaml:4:13: store.key_file: empty path (expected the file holding the store key)",
            "test.yaml:5:3: store.cipher: unknown key 'cipher' (expected one of type, path, key_file)",
        ])
    }

    @Test func theMemoryStoreTakesNoPathOrKey() {
        let problems = ConfigTestSupport.problems("store: { type: memory, path: /var/lib/latchkey, key_file: k }\n" + ConfigTestSupport.minimalRoutes)
        #expect(problems.map(\.path) == ["store.path", "store.key_file"])
        #expect(problems.allSatisfy { $0.message == "not used by the memory store" })
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
