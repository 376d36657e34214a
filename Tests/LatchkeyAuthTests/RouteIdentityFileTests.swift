import Foundation
import Testing
@testable import LatchkeyAuth
#if canImport(Glibc)
import Glibc
#endif

@Suite struct RouteIdentityFileTests {
    let directory: TemporaryDirectory
    let storePath: String

    init() throws {
        directory = try TemporaryDirectory()
        storePath = directory.appending("state/latchkey")
    }

    var path: String { storePath + "/.route-identities.json" }

    func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    func write(_ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
    }

    @Test func choicesAreKeptInAPrivateFileBesideTheTokens() throws {
        let file = try RouteIdentityFile(directory: storePath)
        #expect(try file.read() == [:])
        #expect(file.signature == nil)
        try file.set("kii-bob", forRoute: "kii")
        try file.set("web", forRoute: "api")
        #expect(try file.read() == ["kii": "kii-bob", "api": "web"])
        #expect(try mode(storePath) == 0o700)
        #expect(try mode(path) == 0o600)
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        #expect(text == #"{"format":"latchkey-route-identities-v1","routes":{"api":"web","kii":"kii-bob"}}"#)
        // Another process sees what this one chose.
        #expect(try RouteIdentityFile(directory: storePath).read() == ["kii": "kii-bob", "api": "web"])
    }

    @Test func droppingTheLastChoiceRemovesTheFile() throws {
        let file = try RouteIdentityFile(directory: storePath)
        try file.set("kii-bob", forRoute: "kii")
        let before = try #require(file.signature)
        try file.set("kii-carol", forRoute: "kii")
        #expect(file.signature != before)
        try file.set(nil, forRoute: "kii")
        #expect(try file.read() == [:])
        #expect(!FileManager.default.fileExists(atPath: path))
        // Dropping what is not there is no error.
        try file.set(nil, forRoute: "kii")
    }

    @Test func aFileOthersCanReadIsRefusedAsTheTokenFilesAre() throws {
        let file = try RouteIdentityFile(directory: storePath)
        try file.set("kii-bob", forRoute: "kii")
        chmod(path, 0o644)
        let error = try #require(throws: TokenStoreError.self) { try file.read() }
        #expect(error.message == "route identity file \(path) is accessible by others (mode 0644); run chmod 600 \(path)")
    }

    @Test func aDirectoryOthersCanReadIsRefused() throws {
        try FileManager.default.createDirectory(atPath: storePath, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let error = try #require(throws: TokenStoreError.self) { try RouteIdentityFile(directory: storePath) }
        #expect(error.code == .unsafePermissions)
    }

    @Test func aFileThatIsNotOneIsAClearErrorAndIsNotOverwritten() throws {
        let file = try RouteIdentityFile(directory: storePath)
        try write("{\"routes\":")
        let error = try #require(throws: TokenStoreError.self) { try file.read() }
        #expect(error.message == "route identity file \(path) is not a Latchkey file (not the JSON it should be); "
            + "remove it, and choose again with `latchkey use`")
        #expect(throws: TokenStoreError.self) { try file.set("kii-bob", forRoute: "kii") }
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self) == "{\"routes\":")
    }

    @Test func aNewerFormatIsLeftAlone() throws {
        let file = try RouteIdentityFile(directory: storePath)
        try write(#"{"format":"latchkey-route-identities-v2","routes":{}}"#)
        let error = try #require(throws: TokenStoreError.self) { try file.read() }
        #expect(error.code == .unsupportedFormat)
    }
}
