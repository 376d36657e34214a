#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyLoop

/// The identities `latchkey use ROUTE IDENTITY` chose for routes, in place of the ones
/// their configuration names: `.route-identities.json` in the token store's directory,
///
///     {"format":"latchkey-route-identities-v1","routes":{"kii":"kii-bob"}}
///
/// kept like the token files (0600 in the private directory, replaced atomically under
/// the store's lock), so that a running `serve` and every later one see the choice. It
/// holds names from the configuration only, never a secret, so it is never sealed. Its
/// name starts with a dot, which no identity's file does.
///
/// Every method blocks on file I/O: for the CLI, start-up and a watcher's own thread.
public final class RouteIdentityFile: Sendable {
    public static let fileName = ".route-identities.json"
    static let format = "latchkey-route-identities-v1"

    public let path: String
    private let directory: StoreDirectory
    private let lock: StoreLock

    /// Opens the store directory `directory`, creating it with mode 0700 as the token
    /// store does, and refusing it when others can reach it.
    public init(directory: String) throws(TokenStoreError) {
        self.directory = try StoreDirectory(creating: directory)
        lock = try StoreLock(directory: self.directory.path)
        path = self.directory.path + "/" + Self.fileName
    }

    /// Route name → identity name; empty when no choice was made.
    public func read() throws(TokenStoreError) -> [String: String] {
        try lock.shared { () throws(TokenStoreError) in try contents() }
    }

    /// Records `identity` for `route`; nil drops the route's entry (it goes back to its
    /// configured identity). The file goes when no entry is left.
    public func set(_ identity: String?, forRoute route: String) throws(TokenStoreError) {
        try lock.exclusive { () throws(TokenStoreError) in
            var routes = try contents()
            routes[route] = identity
            if routes.isEmpty {
                try PrivateFile.remove(path, in: directory.path)
            } else {
                try PrivateFile.replace(path, in: directory.path, with: try Self.encode(routes))
            }
        }
    }

    /// What stat(2) says of the file now: a watcher reads it again only when this moves.
    public var signature: FileSignature? { FileSignature(path: path) }

    private func contents() throws(TokenStoreError) -> [String: String] {
        guard let file = try PrivateFile.read(path, .routeIdentities) else { return [:] }
        guard let document = try? JSONDecoder().decode(Document.self, from: Data(file.bytes)) else {
            throw TokenStoreError(.corrupt, "route identity file \(path) is not a Latchkey file (not the JSON it should be); "
                + "remove it, and choose again with `latchkey use`")
        }
        guard document.format == Self.format else {
            throw TokenStoreError(.unsupportedFormat, "route identity file \(path) has a format this version of Latchkey does not read; "
                + "run the version that wrote it, or remove the file")
        }
        return document.routes
    }

    private static func encode(_ routes: [String: String]) throws(TokenStoreError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return Array(try encoder.encode(Document(format: format, routes: routes)))
        } catch {
            throw TokenStoreError(.writeFailed, "cannot encode the route identities: \(error)")
        }
    }

    private struct Document: Codable {
        var format: String
        var routes: [String: String]
    }
}
