import ArgumentParser
import Latchkey
import LatchkeyConfig
import LatchkeyLogging
import LatchkeyLoop
import LatchkeyUpstream
import Logging

/// `latchkey serve`: runs the proxy until SIGTERM or SIGINT; SIGHUP reloads `--config`.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the proxy.",
        discussion: """
            With --config, everything comes from the YAML file. Without it, the quick-start \
            flags describe one listener and one route: every request is forwarded to \
            --upstream with the given headers attached. Values given with --header are \
            visible to other local users in the process list: prefer --bearer-token-file \
            or a config file for real credentials. Tokens that identities obtain are kept \
            in the token store (the config's store: section); its encryption key comes \
            from LATCHKEY_STORE_KEY, store.key_file or the systemd credential \
            latchkey-store-key. SIGHUP reloads the --config file: new requests get the new \
            configuration, requests in flight finish with theirs, and a file with problems \
            or a change that needs a restart leaves the running configuration in force.
            """
    )

    @Option(name: .long, help: "The YAML configuration file.")
    var config: String?

    @Option(name: .long, help: "Quick start: address to listen on (HOST:PORT or unix:PATH; port 0 picks a free one).")
    var listen: String?

    @Option(name: .long, help: "Quick start: the upstream base URL (http or https).")
    var upstream: String?

    @OptionGroup var attach: QuickStartHeaders

    @Option(name: .long, help: "Log format: text or json.")
    var logFormat: LogFormat?

    @Option(name: .long, help: "Event loops (default: one per core).")
    var loops: Int?

    func validate() throws {
        if config != nil && (upstream != nil || listen != nil || !attach.isEmpty) {
            throw ValidationError("--config cannot be combined with the quick-start flags (--listen, --upstream, --header, --bearer-token-file).")
        }
        if config == nil && upstream == nil {
            throw ValidationError("give --config FILE, or --upstream URL for a quick start.")
        }
        if let loops, loops < 1 { throw ValidationError("--loops must be at least 1.") }
    }

    func run() throws {
        ProcessSignals.prepare()
        initializeCurlGlobally()

        var config = try loadConfig()
        let flags = flagOverrides
        flags(&config)

        let sink = config.logging.bootstrap()
        let logger = Logger(label: "latchkey")
        let launch = try ProxyLaunch(config: config, source: self.config ?? Config.commandLineSource, sink: sink, logger: logger)
        let runtime = launch.runtime, metrics = launch.metrics

        let reloader = self.config.map { ConfigReloader(path: $0, runtime: runtime, logger: logger, metrics: metrics, adjust: flags) }
        let signals = try SignalReader(ProcessSignals.termination)
        var signal = try signals.next()
        // One reload at a time, on this thread; a SIGTERM sent meanwhile waits for its end.
        while signal == ProcessSignals.reload {
            if let reloader {
                reloader.reload()
            } else {
                logger.notice("nothing to reload", metadata: ["reason": "serve runs without --config: the quick-start flags are fixed"])
            }
            signal = try signals.next()
        }
        logger.info("shutting down", metadata: ["signal": .stringConvertible(signal), "grace_s": .string("\(runtime.config.server.gracePeriod)")])
        runtime.shutdown()
        logger.info("stopped")
    }

    /// What the command line sets over the configuration, at start and on every reload.
    private var flagOverrides: @Sendable (inout Config) -> Void {
        let logFormat = logFormat, loops = loops
        return { config in
            if let logFormat { config.logging.format = logFormat }
            if let loops { config.server.loops = loops }
        }
    }

    private func loadConfig() throws -> Config {
        do {
            if let path = config { return try ConfigLoader.load(path: path, options: .init(warn: { say("warning: \($0)") })) }
            return try Config.quickStart(listen: listen, upstream: upstream!, headers: attach.headers, bearerTokenFile: attach.bearerTokenFile)
        } catch {
            throw CommandFailure(error.description)
        }
    }
}

extension LogFormat: ExpressibleByArgument {}
