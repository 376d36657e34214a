import Latchkey
import LatchkeyConfig
import LatchkeyLogging
import Logging

extension LoggingSettings {
    /// Routes every `Logger` of the process to standard error in the configured format
    /// and level; returns the sink, which masks secrets once told about them. Once per
    /// process, by the command that runs.
    func bootstrap() -> LogSink {
        let sink = LogSink(format: format)
        let level = Logger.Level(rawValue: level) ?? .info
        LoggingSystem.bootstrap { LatchkeyLogHandler(label: $0, sink: sink, level: level) }
        return sink
    }
}
