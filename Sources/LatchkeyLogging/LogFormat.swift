/// How a log line is written: `text` for a terminal, `json` (one object per line) for a
/// log shipper.
public enum LogFormat: String, Sendable, Equatable {
    case text
    case json
}
