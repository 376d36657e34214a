import Foundation
import LatchkeyAuth
import Logging

/// Runs an identity's hook command for each auth event, with
/// `LATCHKEY_IDENTITY`, `LATCHKEY_EVENT` and `LATCHKEY_DETAIL` in its environment. It is
/// started and left to run (its exit is only logged), so a slow hook never delays a
/// token request; the command line is the configured one, with nothing secret added.
struct AuthEventHook: AuthEventSink {
    let command: [String]
    let logger: Logger

    func record(_ event: AuthEvent) {
        guard let program = command.first else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = Array(command.dropFirst())
        var environment = ProcessInfo.processInfo.environment
        environment["LATCHKEY_IDENTITY"] = event.identity
        environment["LATCHKEY_EVENT"] = event.kind.rawValue
        environment["LATCHKEY_DETAIL"] = event.detail ?? ""
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let logger = logger
        process.terminationHandler = { finished in
            guard finished.terminationStatus != 0 else { return }
            logger.warning("auth hook failed", metadata: [
                "identity": .string(event.identity), "event": .string(event.kind.rawValue),
                "status": .stringConvertible(finished.terminationStatus),
            ])
        }
        do {
            try process.run()
        } catch {
            logger.warning("cannot run the auth hook", metadata: ["identity": .string(event.identity), "error": .string("\(error)")])
        }
    }
}

/// Hands each event to several sinks, in order.
struct AuthEventFanOut: AuthEventSink {
    let sinks: [any AuthEventSink]

    func record(_ event: AuthEvent) {
        for sink in sinks { sink.record(event) }
    }
}
