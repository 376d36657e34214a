import CoreMetrics
import LatchkeyConfig
import Logging

/// `serve --config FILE` on SIGHUP: reads FILE again with the loader `latchkey check` uses,
/// and the runtime applies it whole or keeps the running configuration. One log line per
/// reload, `configuration reloaded` or `configuration not reloaded` (at error level, with
/// each problem as `latchkey check` prints it), and `latchkey_config_reloads_total{result}`.
public final class ConfigReloader: Sendable {
    private let path: String
    private let runtime: ProxyRuntime
    /// What the command line changes in a configuration (`--log-format`, `--loops`), applied
    /// to each loaded one as at start.
    private let adjust: @Sendable (inout Config) -> Void
    private let logger: Logger
    private let succeeded: Counter
    private let failed: Counter

    public init(path: String, runtime: ProxyRuntime, logger: Logger, metrics: any MetricsFactory,
                adjust: @escaping @Sendable (inout Config) -> Void = { _ in }) {
        self.path = path
        self.runtime = runtime
        self.adjust = adjust
        self.logger = logger
        succeeded = Counter(label: "latchkey_config_reloads_total", dimensions: [("result", "success")], factory: metrics)
        failed = Counter(label: "latchkey_config_reloads_total", dimensions: [("result", "failure")], factory: metrics)
    }

    /// Returns once the reload is in force or refused.
    public func reload() {
        do throws(ConfigErrors) {
            var loaded = try ConfigLoader.load(path: path)
            adjust(&loaded)
            let changes = try runtime.reload(loaded, file: path)
            succeeded.increment()
            logger.info("configuration reloaded", metadata: changes.logMetadata(routes: loaded.routes.count))
        } catch {
            failed.increment()
            logger.error("configuration not reloaded", metadata: [
                "problems": .array(error.problems.map { .string($0.description) }),
                "effect": "the running configuration goes on serving",
            ])
        }
    }
}

extension ConfigChanges {
    /// The `configuration reloaded` line's fields: names only, never a value.
    func logMetadata(routes: Int) -> Logger.Metadata {
        func names(_ list: [String]) -> Logger.MetadataValue { .array(list.map { .string($0) }) }
        return [
            "routes": .stringConvertible(routes),
            "routes_added": names(self.routes.added),
            "routes_changed": names(self.routes.changed),
            "routes_removed": names(self.routes.removed),
            "identities_kept": names(identities.kept),
            "identities_new": names(identities.made),
            "identities_removed": names(identities.removed),
        ]
    }
}
