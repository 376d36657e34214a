import CoreMetrics
import Latchkey
import LatchkeyConfig
import LatchkeyLogging
import LatchkeyLoop
import Logging

/// Starting the proxy, as `serve` and `exec` both do once logging is set up: the metrics
/// registry, the secrets (masked in every log line from then on), the token store, and the
/// runtime listening on every listener of `config`.
struct ProxyLaunch {
    let runtime: ProxyRuntime
    let credentials: CredentialStore
    let metrics: MetricsRegistry

    /// `source`: the configuration file, or what stands for it in messages.
    init(config: Config, source: String, sink: LogSink, logger: Logger) throws {
        ProcessMemory.keepFreedBuffers()
        // Like logging, bootstrapped here only: whatever records through swift-metrics lands
        // in the one registry that /.latchkey/metrics renders.
        metrics = MetricsRegistry()
        MetricsSystem.bootstrap(metrics)
        do {
            credentials = try CredentialStore(config: config, sourceName: source, logger: Logger(label: "latchkey.credentials"))
        } catch {
            throw CommandFailure(error.description)
        }
        sink.redact(credentials)
        do {
            // Before listening: a store others can read or a wrong key stops the start here.
            let tokenStore = try makeTokenStore(config: config)
            // Only where `latchkey use` has a choice to make: a configuration without one
            // (the quick start) creates no store directory.
            let choices = config.hasIdentityChoices ? try openRouteIdentityFile(config: config) : nil
            runtime = try ProxyRuntime(config: config, credentials: credentials, logger: logger, sink: sink, tokenStore: tokenStore,
                                       routeIdentities: choices, metrics: metrics)
        } catch {
            throw CommandFailure("\(error)")
        }
        for (listener, info) in zip(config.listeners, runtime.listeners) {
            logger.info("listening", metadata: ["listener": .string(listener.name), "address": .string(info.boundAddress.description)])
        }
        logger.info("ready", metadata: ["loops": .stringConvertible(config.server.resolvedLoops), "routes": .stringConvertible(config.routes.count)])
    }
}
