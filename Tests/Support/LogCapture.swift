import Foundation
import Logging

/// A swift-log handler that keeps rendered messages and metadata in memory.
public final class LogCapture: LogHandler, @unchecked Sendable {
    // Guarded by `lock`; tests read after the store has returned.
    private let lock = NSLock()
    private var lines: [String] = []

    public init() {}
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        lock.withLock { lines.append("\(event.level) \(event.message) \(event.metadata ?? [:])") }
    }

    public var messages: [String] { lock.withLock { lines } }
}
