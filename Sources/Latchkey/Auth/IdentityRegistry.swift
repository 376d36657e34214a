import CoreMetrics
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyUpstream
import Logging
import Synchronization

/// The identities of one configuration, shared by every loop, with the watcher that brings
/// them what other processes store (`latchkey login`). A reload makes the next registry from
/// the running one: the identities it keeps are the same objects, the others are made anew.
public final class IdentityRegistry: Sendable {
    public let identities: [String: Identity]
    /// The identities this registry made (every one at start; after a reload, the added and
    /// changed ones): `start` starts them.
    private let made: [String]
    private let eager: Set<String>
    private let store: any TokenStore
    /// The identities whose tokens are in `store`.
    private let keeping: [Identity]
    /// The identities whose tokens hold values logs must mask (a recipe's secret captures).
    let holdingSecretCaptures: [Identity]
    /// Each identity's `latchkey_auth_events_total` series, by name.
    private let authMetrics: [String: AuthEventMetrics]
    private let metrics: MetricsRegistry
    private let watcher = Mutex<TokenStoreWatcher?>(nil)
    private let credentialWatch: IdentityCredentialWatch

    /// Each identity's auth events go to the log, to its counters made with `metrics`, to
    /// `recorder` (the status page's recent events), and to its hook command if it has one.
    /// `store` keeps the tokens of the identities that keep theirs (`keepsTokens`); static
    /// tokens stay in memory. `client` carries their token requests: required when an
    /// identity keeps tokens (`needsHTTPClient`).
    /// `previous`: the running registry, whose identities named in `kept` go on in this one.
    public init(config: Config, credentials: CredentialStore, store: any TokenStore, client: AuthHTTPClient?, logger: Logger,
                metrics: MetricsRegistry, recorder: any AuthEventSink, previous: IdentityRegistry? = nil,
                kept: [String] = []) throws {
        let log = AuthEventLog(logger: logger)
        var identities: [String: Identity] = [:]
        var made: [String] = []
        var authMetrics: [String: AuthEventMetrics] = [:]
        let keepingCookies = config.identitiesKeepingCookies
        for identity in config.identities {
            let counters = AuthEventMetrics.registered(identity: identity.name, in: metrics)
            authMetrics[identity.name] = counters
            if kept.contains(identity.name), let running = previous?.identities[identity.name] {
                identities[identity.name] = running
                continue
            }
            var sinks: [any AuthEventSink] = [log, counters, recorder]
            if !identity.hook.isEmpty { sinks.append(AuthEventHook(command: identity.hook, logger: logger)) }
            identities[identity.name] = identity.makeIdentity(credentials: credentials, client: client, store: store,
                                                              events: AuthEventFanOut(sinks: sinks),
                                                              cookieJar: keepingCookies.contains(identity.name) ? try CookieJar() : nil)
            made.append(identity.name)
        }
        self.identities = identities
        self.made = made
        self.authMetrics = authMetrics
        self.metrics = metrics
        self.store = store
        eager = Set(config.identities.filter(\.acquireEagerly).map(\.name))
        keeping = config.identities.filter(\.keepsTokens).compactMap { identities[$0.name] }
        holdingSecretCaptures = config.identities.filter(\.holdsSecretCaptures).compactMap { identities[$0.name] }
        credentialWatch = IdentityCredentialWatch(configs: config.identities, identities: identities)
    }

    /// Restores the stored tokens of the identities this registry made and starts their
    /// eager acquisitions, in the background, and watches a shared store for other
    /// processes' changes.
    public func start() {
        for name in made {
            guard let identity = identities[name] else { continue }
            let eagerly = eager.contains(name)
            identity.startInBackground(eagerly: eagerly)
        }
        if let shared = store as? any WatchableTokenStore, !keeping.isEmpty {
            watcher.withLock { $0 = TokenStoreWatcher(store: shared, identities: keeping) }
        }
    }

    /// At each pass of the secret-file watcher, after the credential store reloaded
    /// `changed` (names; often none): the identities whose secrets or key files changed ask
    /// again if their IdP had refused their configuration.
    public func secretsReloaded(_ changed: [String]) {
        credentialWatch.check(reloaded: changed)
    }

    /// `next` runs the configuration now: this registry stops watching the store (`next`
    /// does), the identities `next` does not hold stop (their requests get `reason`), and
    /// the series of the names `next` lacks go.
    public func retire(replacedBy next: IdentityRegistry, reason: IdentityUnavailable) {
        stopWatching()
        for (name, identity) in identities where next.identities[name] !== identity {
            identity.stop(reason: reason)
        }
        for (name, counters) in authMetrics where next.authMetrics[name] == nil {
            metrics.remove(counters)
        }
    }

    /// The process is stopping: stops watching the store, and every identity stops with
    /// the tasks it started (its refresh timer, restore, token requests, cookie saves).
    public func shutdown() {
        stopWatching()
        for identity in identities.values { identity.shutDown() }
    }

    private func stopWatching() {
        watcher.withLock { $0?.stop() }
    }

    /// Whether `config` has identities whose tokens come from an IdP.
    public static func needsHTTPClient(_ config: Config) -> Bool {
        config.identities.contains(where: \.keepsTokens)
    }
}

extension IdentityConfig {
    /// The identity at run time: its token endpoint, or its recipe's steps (a static
    /// token's own secret instead, and always when there is no `client`), and `store` for
    /// the tokens it obtains and for its `cookieJar` (`jar: proxy`); a static token without
    /// a jar stays in memory. `timing` replaces the configured one.
    func makeIdentity(
        credentials: CredentialStore, client: AuthHTTPClient?, store: any TokenStore, events: any AuthEventSink, timing: TokenTiming? = nil,
        cookieJar: CookieJar? = nil
    ) -> Identity {
        let source: any TokenSource = if let client, keepsTokens {
            RecipeTokenSource(config: self, credentials: credentials, client: client)
                ?? OAuthTokenSource(config: self, credentials: credentials, client: client)
        } else {
            StaticTokenSource(identity: name, credentials: credentials)
        }
        let stored = keepsTokens || cookieJar != nil
        return Identity(name: name, source: source, store: stored ? store : MemoryTokenStore(), events: events,
                        initialToken: OAuthTokenSource.seed(self, credentials: credentials), waitsForStart: stored,
                        cookieJar: cookieJar, timing: timing ?? self.timing, keepWarm: keepWarm)
    }
}
