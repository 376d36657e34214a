import Logging

/// A value in a log line. Numbers stay numbers (JSON numbers, no allocation to print).
public enum LogValue: Sendable {
    case string(String)
    case integer(Int64)
    /// A duration in tenths of a millisecond, printed as milliseconds with one decimal.
    case milliseconds(tenths: Int64)
    case list([LogValue])

    public init(_ metadata: Logger.MetadataValue) {
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

    public init(milliseconds duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .milliseconds(tenths: seconds * 10_000 + attoseconds / 100_000_000_000_000)
    }
}
