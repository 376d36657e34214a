import CoreMetrics
import LatchkeyAuth
import LatchkeyUpstream
import Logging
import Synchronization

/// The identities of a configuration, made once at start and shared by every loop, with
/// the one HTTP client their token requests go through and the watcher that brings them
/// what other processes store (`latchkey login`).
public final class IdentityRegistry: Sendable {
    public let identities: [String: Identity]
    private let client: AuthHTTPClient?
    private let eager: Set<String>
    private let store: any TokenStore
    /// The identities whose tokens are in `store`.
    private let keeping: [Identity]
    private let watcher = Mutex<TokenStoreWatcher?>(nil)
    private let credentialWatch: IdentityCredentialWatch

    /// Each identity's auth events go to the log, to its counters made with `metrics`, to
    /// `recorder` (the status page's recent events), and to its hook command if it has one. `store` keeps the tokens of the identities that
    /// keep theirs (`keepsTokens`); static tokens stay in memory. `client` carries their
    /// token requests: required when an identity keeps tokens (`needsHTTPClient`).
    public init(config: Config, credentials: CredentialStore, store: any TokenStore, client: AuthHTTPClient?, logger: Logger,
                metrics: any MetricsFactory, recorder: any AuthEventSink) throws {
        let log = AuthEventLog(logger: logger)
        var identities: [String: Identity] = [:]
        let keepingCookies = config.identitiesKeepingCookies
        for identity in config.identities {
            var sinks: [any AuthEventSink] = [log, AuthEventMetrics(identity: identity.name, factory: metrics), recorder]
            if !identity.hook.isEmpty { sinks.append(AuthEventHook(command: identity.hook, logger: logger)) }
            identities[identity.name] = identity.makeIdentity(credentials: credentials, client: client, store: store,
                                                              events: AuthEventFanOut(sinks: sinks),
                                                              cookieJar: keepingCookies.contains(identity.name) ? try CookieJar() : nil)
        }
        self.identities = identities
        self.client = client
        self.store = store
        eager = Set(config.identities.filter(\.acquireEagerly).map(\.name))
        keeping = config.identities.filter(\.keepsTokens).compactMap { identities[$0.name] }
        credentialWatch = IdentityCredentialWatch(configs: config.identities, identities: identities)
    }

    /// Restores stored tokens, starts the eager acquisitions, in the background, and
    /// watches a shared store for other processes' changes.
    public func start() {
        for (name, identity) in identities {
            let eagerly = eager.contains(name)
            Task { await identity.start(eagerly: eagerly) }
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

    /// Stops watching the store and the token requests' HTTP client; waiting requests get
    /// an error.
    public func shutdown() {
        watcher.withLock { $0?.stop() }
        client?.shutdown()
    }

    /// Whether `config` has identities whose tokens come from an IdP.
    public static func needsHTTPClient(_ config: Config) -> Bool {
        config.identities.contains(where: \.keepsTokens)
    }
}

extension IdentityConfig {
    /// The identity at run time: its token endpoint (a static token's own secret instead,
    /// and always when there is no `client`), and `store` for the tokens it obtains and for
    /// its `cookieJar` (`jar: proxy`); a static token without a jar stays in memory.
    /// `timing` replaces the configured one.
    func makeIdentity(
        credentials: CredentialStore, client: AuthHTTPClient?, store: any TokenStore, events: any AuthEventSink, timing: TokenTiming? = nil,
        cookieJar: CookieJar? = nil
    ) -> Identity {
        let source: any TokenSource = if let client, keepsTokens {
            OAuthTokenSource(config: self, credentials: credentials, client: client)
        } else {
            StaticTokenSource(identity: name, credentials: credentials)
        }
        let stored = keepsTokens || cookieJar != nil
        return Identity(name: name, source: source, store: stored ? store : MemoryTokenStore(), events: events,
                        initialToken: OAuthTokenSource.seed(self, credentials: credentials), waitsForStart: stored,
                        cookieJar: cookieJar, timing: timing ?? self.timing, keepWarm: keepWarm)
    }
}
