#if canImport(Glibc)
import Glibc
#endif
import LatchkeyServer
import LatchkeyConfig
import Logging
import Synchronization

/// A value in a log line. Numbers stay numbers (JSON numbers, no allocation to print).
enum LogValue {
    case string(String)
    case integer(Int64)
    /// A duration in tenths of a millisecond, printed as milliseconds with one decimal.
    case milliseconds(tenths: Int64)
    case list([LogValue])

    init(_ metadata: Logger.MetadataValue) {
        switch metadata {
        case .string(let string): self = .string(string)
        case .stringConvertible(let value):
            if let integer = value as? any BinaryInteger, let exact = Int64(exactly: integer) {
                self = .integer(exact)
            } else {
                self = .string(value.description)
            }
        case .array(let values): self = .list(values.map(LogValue.init))
        case .dictionary(let entries): self = .string(entries.keys.sorted().map { "\($0)=\(entries[$0]!)" }.joined(separator: ","))
        }
    }

    init(milliseconds duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .milliseconds(tenths: seconds * 10_000 + attoseconds / 100_000_000_000_000)
    }
}

/// Formats one log event, as a human-readable line or a JSON object, straight into bytes:
/// the access log writes one per request. Pure apart from the clock, so tests can check
/// both formats without capturing stderr.
enum LogLine {
    /// `fields` in the order they are written; the swift-log handler sorts metadata keys,
    /// the access log writes its fields in a fixed order.
    static func format(
        _ format: LoggingSettings.Format, level: Logger.Level, label: String, message: String,
        fields: [(key: String, value: LogValue)], timestamp: String
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + fields.count * 24)
        switch format {
        case .text:
            out.append(timestamp)
            out.append(" ")
            out.append(levelNames[level]!)
            out.append(" [")
            out.append(label)
            out.append("] ")
            out.append(message)
            for (key, value) in fields {
                out.append(" ")
                out.append(key)
                out.append("=")
                appendText(value, to: &out)
            }
            out.append("\n")
        case .json:
            out.append("{\"time\":\"")
            out.append(timestamp)
            out.append("\",\"level\":\"")
            out.append(level.rawValue)
            out.append("\",\"logger\":")
            JSONText.appendQuoted(label, to: &out)
            out.append(",\"message\":")
            JSONText.appendQuoted(message, to: &out)
            for (key, value) in fields {
                out.append(",")
                JSONText.appendQuoted(key, to: &out)
                out.append(":")
                appendJSON(value, to: &out)
            }
            out.append("}\n")
        }
        return out
    }

    static func format(
        _ format: LoggingSettings.Format, level: Logger.Level, label: String, message: String,
        metadata: Logger.Metadata, timestamp: String
    ) -> [UInt8] {
        let fields = metadata.sorted { $0.key < $1.key }.map { (key: $0.key, value: LogValue($0.value)) }
        return self.format(format, level: level, label: label, message: message, fields: fields, timestamp: timestamp)
    }

    private static let levelNames: [Logger.Level: String] = Dictionary(
        uniqueKeysWithValues: Logger.Level.allCases.map { ($0, $0.rawValue.uppercased()) })

    private static func appendText(_ value: LogValue, to out: inout [UInt8]) {
        switch value {
        case .string(let string):
            if string.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") || $0 < 0x20 }) {
                JSONText.appendQuoted(string, to: &out)
            } else {
                out.append(string)
            }
        case .integer(let integer): appendDecimal(integer, to: &out)
        case .milliseconds(let tenths): appendTenths(tenths, to: &out)
        case .list(let values): appendList(values, to: &out, element: appendText)
        }
    }

    private static func appendJSON(_ value: LogValue, to out: inout [UInt8]) {
        switch value {
        case .string(let string): JSONText.appendQuoted(string, to: &out)
        case .integer(let integer): appendDecimal(integer, to: &out)
        case .milliseconds(let tenths): appendTenths(tenths, to: &out)
        case .list(let values): appendList(values, to: &out, element: appendJSON)
        }
    }

    private static func appendList(_ values: [LogValue], to out: inout [UInt8], element: (LogValue, inout [UInt8]) -> Void) {
        out.append("[")
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(",") }
            element(value, &out)
        }
        out.append("]")
    }

    private static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[index]) }
        }
    }

    private static func appendTenths(_ tenths: Int64, to out: inout [UInt8]) {
        appendDecimal(tenths / 10, to: &out)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(ascii: "0") + UInt8(tenths.magnitude % 10))
    }

    /// RFC 3339 UTC with milliseconds, from the wall clock. The part up to the second is
    /// formatted once per second and reused: every access line needs a timestamp.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let seconds = Int(now.tv_sec)
        let prefix = secondPrefix.withLock { cache in
            if cache.seconds != seconds { cache = (seconds, formatSeconds(now.tv_sec)) }
            return cache.text
        }
        let millis = Int(now.tv_nsec / 1_000_000)
        return prefix + (millis < 10 ? ".00" : millis < 100 ? ".0" : ".") + String(millis) + "Z"
    }

    private static let secondPrefix = Mutex<(seconds: Int, text: String)>((-1, ""))

    private static func formatSeconds(_ seconds: time_t) -> String {
        var seconds = seconds
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
    }
}

extension [UInt8] {
    mutating func append(_ text: String) {
        append(contentsOf: text.utf8)
    }
}
