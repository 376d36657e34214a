#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop
import LatchkeyConfig
import Logging
import Synchronization

/// Where log lines go, and what must never appear in them. Every secret value the proxy
/// holds is masked in the finished line as a last line of defence: code should not log a
/// secret in the first place, and this makes sure a mistake does not leak one.
public final class LogSink: Sendable {
    private let format: LoggingSettings.Format
    private let fd: Int32
    private let writeLock = Mutex(())
    // A reference, not a closure: reading a closure through `withLock`'s inout parameter
    // re-wraps it in a reabstraction thunk on every access.
    private let credentials = Mutex<CredentialStore?>(nil)

    public init(format: LoggingSettings.Format, fd: Int32 = 2) {
        self.format = format
        self.fd = fd
    }

    /// Masks the values `store` holds, from now on; called once the credentials are loaded.
    public func redact(_ store: CredentialStore) {
        credentials.withLock { $0 = store }
    }

    func write(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) {
        write(line: LogLine.format(format, level: level, label: label, message: message, metadata: metadata, timestamp: LogLine.timestamp()))
    }

    /// An access-log record, fields in their fixed order.
    func write(label: String, message: String, fields: [(key: String, value: LogValue)]) {
        write(line: LogLine.format(format, level: .info, label: label, message: message, fields: fields, timestamp: LogLine.timestamp()))
    }

    private func write(line: [UInt8]) {
        var line = line
        if let secrets = credentials.withLock({ $0 })?.snapshot.redactionValues {
            for secret in secrets where !secret.isEmpty {
                LogRedaction.mask(Array(secret.utf8), in: &line)
            }
        }
        writeLock.withLock { _ in
            line.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    guard let written = try? systemCall("write(log)", { Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset) }),
                          written > 0 else { return }
                    offset += written
                }
            }
        }
    }
}

/// swift-log handler writing through a `LogSink`. Only the executable bootstraps it.
public struct LatchkeyLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let sink: LogSink

    public init(label: String, sink: LogSink, level: Logger.Level) {
        self.label = label
        self.sink = sink
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        sink.write(level: event.level, label: label, message: "\(event.message)", metadata: merged)
    }
}

/// Replaces every occurrence of a secret in a finished log line.
enum LogRedaction {
    static let replacement = Array("[REDACTED]".utf8)

    /// memchr(3) for the secret's first byte, memcmp(3) for the rest: this runs on every
    /// log line.
    static func mask(_ secret: [UInt8], in line: inout [UInt8]) {
        guard let first = secret.first, secret.count <= line.count else { return }
        var hits: [Int] = []
        line.withUnsafeBytes { haystack in
            secret.withUnsafeBytes { needle in
                let base = haystack.baseAddress!
                let last = haystack.count - needle.count
                var offset = 0
                while offset <= last {
                    guard let hit = memchr(base + offset, Int32(first), last - offset + 1) else { return }
                    let position = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + position, needle.baseAddress!, needle.count) == 0 {
                        hits.append(position)
                        offset = position + needle.count
                    } else {
                        offset = position + 1
                    }
                }
            }
        }
        for position in hits.reversed() {
            line.replaceSubrange(position..<(position + secret.count), with: replacement)
        }
    }
}
