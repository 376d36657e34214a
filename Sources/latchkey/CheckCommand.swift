import ArgumentParser
import Latchkey
import Foundation
import LatchkeyConfig

/// `latchkey check --config FILE`: validates a config as `serve` would load it and lists
/// every problem, one per line, as `FILE:LINE:COLUMN: PATH: message (expected ...)`.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a configuration file and list every problem in it.",
        discussion: """
            Exits 0 and prints a summary when the configuration is valid; otherwise prints each \
            problem on its own line to standard error and exits 1. Secret files, environment \
            variables and TLS files are checked too, unless --skip-secrets is given: a \
            certificate or key file that cannot be read, is not PEM or is cut short, an expired \
            or not yet valid certificate, a key that is not the certificate's or that others \
            can read. A certificate that expires within 7 days is a warning.
            """
    )

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String

    @Flag(name: .long, help: "Do not read secret files and environment variables or check that TLS files exist (for validating a config on a machine without its secrets).")
    var skipSecrets = false

    func run() throws {
        do {
            let options = ConfigLoader.Options(checkExternal: !skipSecrets, warn: { say("warning: \($0)") })
            let loaded = try ConfigLoader.load(path: config, options: options)
            let listeners = loaded.listeners.count
            let routes = loaded.routes.count
            print("config OK: \(listeners) listener\(listeners == 1 ? "" : "s"), \(routes) route\(routes == 1 ? "" : "s")")
        } catch {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
            throw ExitCode(1)
        }
    }
}
