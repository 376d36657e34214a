import ArgumentParser
import Foundation
import Latchkey
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLoop

/// `latchkey status --config FILE [--json]`: every identity's token state and every
/// route's identity, read from the token store `serve` shares. Never a token.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the state of every identity's token and the identity of every route; never a token.",
        discussion: """
            For each identity: its grant, where its token lives (store, static, memory), its \
            state (valid; expired, renewed when next needed; login required; no token yet; \
            misconfigured, with the configuration key to fix and the last error), \
            when it expires and was obtained (the last login or refresh), and whether a \
            refresh token is kept. For each route that injects an identity: the one requests \
            get when they name none (as `latchkey use` chose it) and those they may pick with \
            the Latchkey-Identity header. Read from the token store, so it shows what a \
            running serve uses, without asking it; with store: type: memory only that serve \
            knows. --json prints the same as one JSON document, which a running serve also \
            answers at GET /.latchkey/identities with its live state (refreshing, failing).
            """
    )

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String

    @Flag(name: .long, help: "Print JSON instead of tables.")
    var json = false

    func run() throws {
        ProcessSignals.prepare()
        let loaded = try Config.forCommand(config, checkingSecrets: false)
        loaded.logging.bootstrapQuietly()
        let store: any TokenStore
        let chosen: [String: String]
        do {
            store = try makeTokenStore(config: loaded)
            let choices = loaded.routes.contains { $0.identity != nil } ? try openRouteIdentityFile(config: loaded, creating: false) : nil
            chosen = try choices?.read() ?? [:]
        } catch {
            throw CommandFailure("\(error)")
        }
        let now = Date()
        let environment = ProcessInfo.processInfo.environment
        let report = try runInterruptibly {
            await StatusReport.gather(config: loaded, store: store, chosen: chosen, environment: environment, now: now)
        }
        print(json ? report.json : report.text(now: now), terminator: "")
    }
}
