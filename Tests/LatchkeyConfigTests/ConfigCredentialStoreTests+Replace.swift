import Foundation
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

/// A configuration reload replacing the store's whole set of secrets.
extension ConfigCredentialStoreTests {
    static func entry(_ name: String, _ source: SecretSource) -> SecretEntry {
        SecretEntry(name: name, source: source, configPath: "credentials.\(name)")
    }

    @Test func aReplacedSetKeepsTheNamesItLacksUntilRetained() throws {
        let store = try CredentialStore(entries: [Self.entry("a", .inline("one")), Self.entry("b", .inline("two"))])
        let reloaded = try CredentialStore.resolve([Self.entry("a", .inline("ten")), Self.entry("c", .inline("three"))])
        store.replace(with: reloaded)
        // A loop still routing by the previous configuration finds what it names.
        #expect(store.snapshot.values == ["a": "ten", "b": "two", "c": "three"])
        store.retain(only: reloaded)
        #expect(store.snapshot.values == ["a": "ten", "c": "three"])
        #expect(store.snapshot.generation == 2)
        #expect(store.snapshot.redactionValues == ["three", "ten"])
    }

    @Test func theFilesWatchedAreTheReplacedSets() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = directory.appendingPathComponent("old"), new = directory.appendingPathComponent("new")
        try "old\n".write(to: old, atomically: true, encoding: .utf8)
        try "new\n".write(to: new, atomically: true, encoding: .utf8)
        let store = try CredentialStore(entries: [Self.entry("api", .file(old.path))])
        let reloaded = try CredentialStore.resolve([Self.entry("api", .file(new.path))])
        store.replace(with: reloaded)
        store.retain(only: reloaded)
        #expect(store["api"] == "new")

        try "stale\n".write(to: old, atomically: true, encoding: .utf8)
        #expect(store.reloadIfChanged() == [])
        try "rotated\n".write(to: new, atomically: true, encoding: .utf8)
        #expect(store.reloadIfChanged() == ["api"])
        #expect(store["api"] == "rotated")
    }

    @Test func aSetThatCannotBeResolvedNamesEveryProblemAtItsPlace() {
        do {
            _ = try CredentialStore.resolve([Self.entry("gone", .file("/nonexistent/secret"))], sourceName: "/etc/latchkey.yaml")
            Issue.record("expected a problem")
        } catch {
            #expect(error.problems.map(\.path) == ["credentials.gone"])
            #expect(error.problems.allSatisfy { $0.file == "/etc/latchkey.yaml" })
        }
    }
}
