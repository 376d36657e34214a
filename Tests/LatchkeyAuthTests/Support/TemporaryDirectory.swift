import Foundation

/// A private (0700) directory for one test's files, removed when the value goes away.
final class TemporaryDirectory {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A path inside the directory.
    func appending(_ name: String) -> String { url.appendingPathComponent(name).path }
}

/// A directory for one test's files, removed when `body` returns.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let directory = try TemporaryDirectory()
    return try withExtendedLifetime(directory) { try body(directory.url) }
}
