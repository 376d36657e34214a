import Foundation
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyServer
import Logging

extension ProxyRuntime {
    /// What the identities a reload stops answer the requests still waiting for their token.
    static let stoppedByReload = "a configuration reload removed or changed it"

    /// Puts `loaded` in force, whole, or throws why not and leaves the running configuration
    /// as it was. Everything that can fail comes first (the decision, the secrets, the TLS
    /// listeners' new certificates, a store to open, the identities to make, the session
    /// keys); then the new secrets, the new
    /// identities start, every loop gets the new context for its new requests, and what the
    /// configuration no longer has stops. Requests in flight finish with the context, the
    /// route and the identity they started with. `file` places the problems.
    ///
    /// Blocks on file I/O and until every loop has the new context: call it from the thread
    /// that reads the signals, never a loop or the cooperative pool. Reloads run one at a time.
    public func reload(_ loaded: Config, file: String) throws(ConfigErrors) -> ConfigChanges {
        try reloading.withLock { _ throws(ConfigErrors) -> ConfigChanges in
            let current = running.withLock { $0 }
            let changes: ConfigChanges
            switch ReloadDecision(running: current.config, loaded: loaded, file: file) {
            case .refuse(let problems): throw ConfigErrors(problems)
            case .apply(let found): changes = found
            }
            let secrets = try CredentialStore.resolve(loaded.secretEntries, sourceName: file)
            let next: RunningConfiguration
            let tls: ListenerCertificates.Prepared
            do {
                tls = try certificates.prepare(loaded)
                next = try prepare(loaded, changes: changes, current: current)
            } catch {
                throw ConfigErrors([ConfigProblem(file: file, path: "", message: "\(error)")])
            }

            services.credentials.replace(with: secrets)
            services.redaction.follow(next.identities)
            next.identities.start()
            install(next.context, settings: ConnectionSettings(loaded.limits))
            certificates.apply(tls)
            // No loop routes by the running configuration any more: what only it had can go.
            services.credentials.retain(only: secrets)
            current.identities.retire(replacedBy: next.identities, reason: .failing(reason: Self.stoppedByReload, retryAt: Date()))
            current.context.metrics.retire(replacedBy: next.context.metrics)
            if next.tokenStore.settings != current.tokenStore.settings { StoreMetrics.observe(next.tokenStore.store, factory: services.metrics) }
            watchFiles(of: next)
            running.withLock { $0 = next }
            return changes
        }
    }

    /// The parts of `loaded` that can fail to come about, made without touching what runs;
    /// the identities last, so that a failure leaves none of their series behind.
    private func prepare(_ loaded: Config, changes: ConfigChanges, current: RunningConfiguration) throws -> RunningConfiguration {
        let policies = try Self.policies(loaded, bound: listeners, previous: current.context.policies)
        let routeIdentities = try routeIdentityFile(for: loaded, current: current)
        let tokenStore = try tokenStore(for: loaded, changes: changes, current: current)
        let client = try RuntimeServices.client(for: loaded, running: current.client)
        let identities: IdentityRegistry
        do {
            identities = try services.identities(for: loaded, store: tokenStore.store, client: client, previous: current.identities,
                                                 kept: changes.identities.kept)
        } catch {
            if current.client == nil { client?.shutdown() }
            throw error
        }
        return services.running(config: loaded, identities: identities, tokenStore: tokenStore, routeIdentities: routeIdentities,
                                client: client, policies: policies)
    }

    /// The store `loaded`'s identities keep their tokens in: the running one, unless no
    /// running identity keeps anything in a store and `loaded` names another than the one
    /// open (at first, none is).
    private func tokenStore(for loaded: Config, changes: ConfigChanges, current: RunningConfiguration) throws -> OpenTokenStore {
        guard changes.opensTokenStore, current.tokenStore.settings != loaded.store else { return current.tokenStore }
        return OpenTokenStore(try makeTokenStore(config: loaded), for: loaded)
    }

    /// The route identity file `loaded` follows: none without a choice of identities; the
    /// running one while the store's directory stays; else the one in `loaded`'s store.
    private func routeIdentityFile(for loaded: Config, current: RunningConfiguration) throws -> RouteIdentityFile? {
        guard loaded.hasIdentityChoices else { return nil }
        if let running = current.routeIdentities, current.config.store == loaded.store { return running }
        return try openRouteIdentityFile(config: loaded)
    }
}
