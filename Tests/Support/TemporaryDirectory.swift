import Foundation

/// A fresh private directory under the system's temporary one that goes away with this
/// object: a suite holding one per test, or a fixture holding its files, leaves nothing
/// behind, whichever way a test ends.
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(prefix: String = "latchkey-config") throws {
        url = try Self.create(prefix: prefix)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A fresh private directory, which the caller removes.
    public static func create(prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }
}
