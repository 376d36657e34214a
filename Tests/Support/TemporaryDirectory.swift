import Foundation

/// A fresh directory (`ConfigTestSupport.temporaryDirectory`) that goes away with this
/// object: a suite holding one per test leaves nothing behind, whichever way a test ends.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init() throws {
        url = try ConfigTestSupport.temporaryDirectory()
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
