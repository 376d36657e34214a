#if canImport(Glibc)
import Glibc
#endif
import Logging

/// Formats one log event as a human-readable line or a JSON object. Pure, so tests can
/// check both formats without capturing stderr.
enum LogLine {
    /// `fields` in the order they are written; the swift-log handler sorts metadata keys,
    /// the access log writes its fields in a fixed order without building a dictionary.
    static func format(
        _ format: LoggingSettings.Format, level: Logger.Level, label: String, message: String,
        fields: [(key: String, value: Logger.MetadataValue)], timestamp: String
    ) -> String {
        var line = ""
        line.reserveCapacity(128 + fields.count * 24)
        switch format {
        case .text:
            line += timestamp + " " + level.rawValue.uppercased() + " [" + label + "] " + message
            for (key, value) in fields {
                line += " " + key + "=" + text(value)
            }
            line += "\n"
        case .json:
            line += "{\"time\":\"" + timestamp + "\",\"level\":\"" + level.rawValue + "\",\"logger\":" + quoted(label)
            line += ",\"message\":" + quoted(message)
            for (key, value) in fields {
                line += "," + quoted(key) + ":" + json(value)
            }
            line += "}\n"
        }
        return line
    }

    static func format(
        _ format: LoggingSettings.Format, level: Logger.Level, label: String, message: String,
        metadata: Logger.Metadata, timestamp: String
    ) -> String {
        let fields = metadata.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
        return self.format(format, level: level, label: label, message: message, fields: fields, timestamp: timestamp)
    }

    private static func text(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let string):
            string.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) ? quoted(string) : string
        case .stringConvertible(let convertible): text(.string(convertible.description))
        case .array(let values): "[" + values.map(text).joined(separator: ",") + "]"
        case .dictionary(let entries): "{" + entries.keys.sorted().map { "\($0)=\(text(entries[$0]!))" }.joined(separator: ",") + "}"
        }
    }

    private static func json(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let string): quoted(string)
        case .stringConvertible(let convertible):
            convertible is any BinaryInteger || convertible is Double ? convertible.description : quoted(convertible.description)
        case .array(let values): "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let entries): "{" + entries.keys.sorted().map { "\(quoted($0)):\(json(entries[$0]!))" }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal (RFC 8259 §7).
    static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// RFC 3339 UTC with milliseconds, from the wall clock.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
    }
}
