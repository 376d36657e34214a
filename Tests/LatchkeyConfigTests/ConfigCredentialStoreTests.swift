import Foundation
import Logging
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

@Suite("Credential store")
struct ConfigCredentialStoreTests {
    @Test func resolvesInlineEnvironmentAndFile() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token")
        try "from-file\r\n\n".write(to: file, atomically: true, encoding: .utf8)
        let store = try CredentialStore(
            entries: [
                SecretEntry(name: "inline", source: .inline("from-config"), configPath: "credentials.inline"),
                SecretEntry(name: "env", source: .environment("TOKEN"), configPath: "credentials.env"),
                SecretEntry(name: "file", source: .file(file.path), configPath: "credentials.file"),
            ],
            environment: ["TOKEN": "from-env"]
        )
        let snapshot = store.snapshot
        #expect(snapshot.values == ["inline": "from-config", "env": "from-env", "file": "from-file"])
        #expect(snapshot.generation == 0)
        #expect(store["file"] == "from-file")
        #expect(snapshot.redactionValues == ["from-config", "from-file", "from-env"])
    }

    @Test func reportsEveryUnresolvableSecretWithoutValues() throws {
        do {
            _ = try CredentialStore(
                entries: [
                    SecretEntry(name: "a", source: .environment("UNSET"), configPath: "credentials.a"),
                    SecretEntry(name: "b", source: .file("/nonexistent/token"), configPath: "credentials.b"),
                    SecretEntry(name: "c", source: .environment("TWO_LINES"), configPath: "credentials.c"),
                    SecretEntry(name: "d", source: .inline(""), configPath: "credentials.d"),
                ],
                environment: ["TWO_LINES": "hidden-one\nhidden-two"], sourceName: "latchkey.yaml"
            )
            Issue.record("expected errors")
        } catch {
            #expect(error.problems.map(\.path) == ["credentials.a", "credentials.b", "credentials.c", "credentials.d"])
            #expect(!error.description.contains("hidden"))
            #expect(error.problems.allSatisfy { $0.file == "latchkey.yaml" })
        }
    }

    @Test func reloadDetectsRotation() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token")
        try "first\n".write(to: file, atomically: true, encoding: .utf8)
        let store = try CredentialStore(entries: [SecretEntry(name: "api", source: .file(file.path), configPath: "credentials.api")])
        #expect(store["api"] == "first")
        #expect(store.reloadIfChanged() == [])

        // Atomic replace (new inode), as `mv` and most secret managers do.
        try "second\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(store.reloadIfChanged() == ["api"])
        #expect(store["api"] == "second")
        #expect(store.snapshot.generation == 1)

        // In-place rewrite of the same length, within the same timestamp tick.
        let handle = try FileHandle(forWritingTo: file)
        try handle.write(contentsOf: Data("thirds\n".utf8))
        try handle.close()
        #expect(store.reloadIfChanged() == ["api"])
        #expect(store["api"] == "thirds")
        #expect(store.reloadIfChanged() == [])
        #expect(store.snapshot.generation == 2)
    }

    /// A pass stats a bounded number of files, taking turns: a change to a file out of turn
    /// is seen on its turn.
    @Test func aPassChecksItsShareOfTheFilesInTurn() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var entries: [SecretEntry] = []
        for name in ["a", "b", "c"] {
            let file = directory.appendingPathComponent(name)
            try "1\n".write(to: file, atomically: true, encoding: .utf8)
            entries.append(SecretEntry(name: name, source: .file(file.path), configPath: "credentials.\(name)"))
        }
        let store = CredentialStore(try CredentialStore.resolve(entries, environment: [:]), filesPerPass: 2)
        // Files just written are checked every pass until they have aged.
        let aged = Int64(Date().timeIntervalSince1970) + 10
        #expect(store.reload(now: aged).changed == []) // a, b in turn; c too recent to skip
        #expect(store.reload(now: aged).changed == []) // c, a

        try "2\n".write(to: directory.appendingPathComponent("c"), atomically: true, encoding: .utf8)
        #expect(store.reload(now: aged).changed == []) // a, b: c waits for its turn
        #expect(store.reload(now: aged).changed == ["c"]) // c, a
        #expect(store["c"] == "2")
    }

    @Test func reloadFollowsAKubernetesStyleSymlinkSwap() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manager = FileManager.default
        // token -> ..data/token, ..data -> ..v1
        let v1 = directory.appendingPathComponent("..v1")
        try manager.createDirectory(at: v1, withIntermediateDirectories: true)
        try "one".write(to: v1.appendingPathComponent("token"), atomically: true, encoding: .utf8)
        try manager.createSymbolicLink(atPath: directory.appendingPathComponent("..data").path, withDestinationPath: "..v1")
        try manager.createSymbolicLink(atPath: directory.appendingPathComponent("token").path, withDestinationPath: "..data/token")
        let path = directory.appendingPathComponent("token").path
        let store = try CredentialStore(entries: [SecretEntry(name: "k8s", source: .file(path), configPath: "credentials.k8s")])
        #expect(store["k8s"] == "one")

        let v2 = directory.appendingPathComponent("..v2")
        try manager.createDirectory(at: v2, withIntermediateDirectories: true)
        try "two".write(to: v2.appendingPathComponent("token"), atomically: true, encoding: .utf8)
        try manager.createSymbolicLink(atPath: directory.appendingPathComponent("..data_tmp").path, withDestinationPath: "..v2")
        #expect(rename(directory.appendingPathComponent("..data_tmp").path, directory.appendingPathComponent("..data").path) == 0)
        try manager.removeItem(at: v1)

        #expect(store.reloadIfChanged() == ["k8s"])
        #expect(store["k8s"] == "two")
    }

    @Test func unreadableFileKeepsTheLastGoodValue() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token")
        try "sekrit-v1\n".write(to: file, atomically: true, encoding: .utf8)
        let logs = LogCapture()
        let store = try CredentialStore(
            entries: [SecretEntry(name: "api", source: .file(file.path), configPath: "credentials.api")],
            logger: Logger(label: "test") { _ in logs }
        )

        try FileManager.default.removeItem(at: file)
        let missing = store.reload()
        #expect(missing.changed == [])
        #expect(missing.failures.keys.sorted() == ["api"])
        #expect(store["api"] == "sekrit-v1")

        // An empty file (a half-written rotation) is refused too.
        try "".write(to: file, atomically: true, encoding: .utf8)
        #expect(store.reload().failures["api"]?.contains("empty") == true)
        #expect(store["api"] == "sekrit-v1")

        try "sekrit-v2\n".write(to: file, atomically: true, encoding: .utf8)
        let recovered = store.reload()
        #expect(recovered.changed == ["api"])
        #expect(recovered.failures.isEmpty)
        #expect(store["api"] == "sekrit-v2")

        let messages = logs.messages
        #expect(messages.contains { $0.contains("cannot reload credential file") })
        #expect(messages.contains { $0.contains("credential reloaded") })
        #expect(!messages.contains { $0.contains("sekrit") })
    }

    @Test func configEntriesIncludeInboundSecrets() throws {
        let config = Config(
            listeners: [
                ListenerConfig(name: "pod", address: .tcp(host: "0.0.0.0", port: 8080), inbound: .sharedSecret(header: "X-S", secret: .inline("in"))),
            ],
            routes: [],
            credentials: ["b": .inline("bee"), "a": .inline("ay")]
        )
        #expect(config.secretEntries.map(\.name) == ["a", "b", "inbound:pod"])
        #expect(config.secretEntries.map(\.configPath) == ["credentials.a", "credentials.b", "listeners[0].inbound.shared_secret"])
        let store = try CredentialStore(config: config)
        #expect(store[Config.inboundSecretName(listener: "pod")] == "in")
    }
}
