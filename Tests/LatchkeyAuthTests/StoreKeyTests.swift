import Foundation
import Testing
@testable import LatchkeyAuth

@Suite struct StoreKeyTests {
    /// `openssl rand -base64 32` output, with the line break it ends with.
    static let keyText = "q83vEjRWeJq7zN7vASNFZ4mrze8SNFZ4kKvN7wEjRWc=\n"

    @Test func readsTheBase64Of32BytesAndWipesTheText() throws {
        var text = Array(("  " + Self.keyText).utf8)
        let key = try StoreKey(text: &text, origin: "test")
        #expect(text.allSatisfy { $0 == 0 })
        #expect(key.origin == "test")
    }

    @Test(arguments: ["", "   \n", "not base64!", "c2hvcnQ=", Self.keyText + Self.keyText, String(Self.keyText.dropLast(2))])
    func refusesTextThatIsNotAKey(_ text: String) throws {
        var bytes = Array(text.utf8)
        let error = try #require(throws: TokenStoreError.self) { try StoreKey(text: &bytes, origin: "environment variable LATCHKEY_STORE_KEY") }
        #expect(error.code == .invalidKey)
        #expect(error.message.contains("environment variable LATCHKEY_STORE_KEY"))
        #expect(error.message.contains("openssl rand -base64 32"))
        if !text.isEmpty { #expect(!error.message.contains(text.trimmingCharacters(in: .whitespacesAndNewlines))) }
    }

    @Test func noSourceMeansNoKey() throws {
        #expect(try StoreKey.configured(keyFile: nil, environment: [:]) == nil)
    }

    @Test func fromTheEnvironment() throws {
        let key = try #require(try StoreKey.configured(keyFile: nil, environment: ["LATCHKEY_STORE_KEY": Self.keyText]))
        #expect(key.origin == "environment variable LATCHKEY_STORE_KEY")
    }

    @Test func fromAPrivateKeyFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("store.key")
        try write(Self.keyText, to: path, mode: 0o400)
        let key = try #require(try StoreKey.configured(keyFile: path, environment: [:]))
        #expect(key.origin == "key file \(path)")
    }

    @Test func aKeyFileOthersCanReadIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("store.key")
        try write(Self.keyText, to: path, mode: 0o644)
        let error = try #require(throws: TokenStoreError.self) { try StoreKey.configured(keyFile: path, environment: [:]) }
        #expect(error.code == .unsafePermissions)
        #expect(error.message == "key file \(path) is accessible by others (mode 0644); run chmod 600 \(path)")
    }

    @Test func aMissingKeyFileIsNamed() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("absent.key")
        let error = try #require(throws: TokenStoreError.self) { try StoreKey.configured(keyFile: path, environment: [:]) }
        #expect(error.message == "key file \(path) does not exist")
    }

    @Test func fromASystemdCredential() throws {
        let directory = try TemporaryDirectory()
        // systemd shows its ACL's mask in the group bits: not refused.
        try write(Self.keyText, to: directory.appending("latchkey-store-key"), mode: 0o440)
        let key = try #require(try StoreKey.configured(keyFile: nil, environment: ["CREDENTIALS_DIRECTORY": directory.path]))
        #expect(key.origin == "systemd credential \(directory.path)/latchkey-store-key")
        // A credentials directory without this credential gives no key.
        #expect(try StoreKey.configured(keyFile: nil, environment: ["CREDENTIALS_DIRECTORY": directory.appending("other")]) == nil)
    }

    @Test func twoSourcesAreRefusedRatherThanRanked() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("store.key")
        try write(Self.keyText, to: path, mode: 0o600)
        let error = try #require(throws: TokenStoreError.self) {
            try StoreKey.configured(keyFile: path, environment: ["LATCHKEY_STORE_KEY": Self.keyText])
        }
        #expect(error.code == .invalidKey)
        #expect(error.message == "the store key is given more than once (environment variable LATCHKEY_STORE_KEY, key file \(path)); keep one")
    }

    private func write(_ text: String, to path: String, mode: Int) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }
}
