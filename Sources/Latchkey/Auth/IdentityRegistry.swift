import CoreMetrics
import LatchkeyAuth
import Logging

/// The identities of a configuration, made once at start and shared by every loop, with
/// the one HTTP client their token requests go through.
public final class IdentityRegistry: Sendable {
    public let identities: [String: Identity]
    private let client: AuthHTTPClient?
    private let eager: Set<String>

    /// Each identity's auth events go to the log, to its counters made with `metrics`, and
    /// to its hook command if it has one.
    public init(config: Config, credentials: CredentialStore, store: any TokenStore, logger: Logger,
                metrics: any MetricsFactory) throws {
        let isStatic: (IdentityConfig) -> Bool = { if case .staticToken = $0.grant { true } else { false } }
        let client = config.identities.allSatisfy(isStatic) ? nil : try AuthHTTPClient()
        let log = AuthEventLog(logger: logger)
        var identities: [String: Identity] = [:]
        for identity in config.identities {
            let source: any TokenSource = if let client, !isStatic(identity) {
                OAuthTokenSource(config: identity, credentials: credentials, client: client)
            } else {
                StaticTokenSource(identity: identity.name, credentials: credentials)
            }
            var sinks: [any AuthEventSink] = [log, AuthEventMetrics(identity: identity.name, factory: metrics)]
            if !identity.hook.isEmpty { sinks.append(AuthEventHook(command: identity.hook, logger: logger)) }
            let events = AuthEventFanOut(sinks: sinks)
            identities[identity.name] = Identity(
                name: identity.name, source: source, store: store, events: events,
                initialToken: OAuthTokenSource.seed(identity, credentials: credentials), timing: identity.timing)
        }
        self.identities = identities
        self.client = client
        eager = Set(config.identities.filter(\.acquireEagerly).map(\.name))
    }

    /// Restores stored tokens and starts the eager acquisitions, in the background.
    public func start() {
        for (name, identity) in identities {
            let eagerly = eager.contains(name)
            Task { await identity.start(eagerly: eagerly) }
        }
    }

    /// Stops the token requests' HTTP client; waiting requests get an error.
    public func shutdown() {
        client?.shutdown()
    }
}
