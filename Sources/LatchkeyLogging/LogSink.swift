import CoreMetrics
import Logging
import Synchronization

/// Where log lines go, and what must never appear in them. Every secret value the proxy
/// holds is masked in the finished line as a last line of defence: code should not log a
/// secret in the first place, and this makes sure a mistake does not leak one. Finished
/// lines go to a `LogWriter`, so logging never waits for the output.
public final class LogSink: Sendable {
    private let format: LogFormat
    private let writer: LogWriter
    // A reference, not a closure: reading a closure through `withLock`'s inout parameter
    // re-wraps it in a reabstraction thunk on every access.
    private let redaction = Mutex<(any LogRedactionSource)?>(nil)

    public init(format: LogFormat, fd: Int32 = 2, capacity: Int = LogWriter.defaultCapacity) {
        self.format = format
        writer = LogWriter(fd: fd, capacity: capacity) { count in
            LogLine.format(format, level: .warning, label: "latchkey", message: "log lines dropped: the log output was not being read",
                           fields: [("dropped", .integer(Int64(count)))], timestamp: LogLine.timestamp())
        }
    }

    /// Masks the values `source` holds, from now on; called once the credentials are loaded.
    public func redact(_ source: any LogRedactionSource) {
        redaction.withLock { $0 = source }
    }

    /// `latchkey_log_lines_dropped_total`.
    public func countDroppedLines(in counter: Counter) {
        writer.countDroppedLines(in: counter)
    }

    public var droppedLines: Int { writer.droppedLines }

    /// Waits, up to `timeout`, until every line logged so far is written.
    public func flush(timeout: Duration) {
        writer.flush(timeout: timeout)
    }

    func write(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) {
        write(line: LogLine.format(format, level: level, label: label, message: message, metadata: metadata, timestamp: LogLine.timestamp()))
    }

    /// An access-log record, fields in their fixed order.
    public func write(label: String, message: String, fields: [(key: String, value: LogValue)]) {
        write(line: LogLine.format(format, level: .info, label: label, message: message, fields: fields, timestamp: LogLine.timestamp()))
    }

    private func write(line: [UInt8]) {
        var line = line
        redaction.withLock({ $0 })?.redactionMask.mask(&line)
        writer.append(line)
    }
}
