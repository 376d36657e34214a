#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the status page (`GET /.latchkey/`) shows a person: the running serve's status
/// report (what `/.latchkey/identities` answers), each identity with its last error, every
/// route with where it goes, and the recent auth events. Names, states and times only:
/// never a token, a refresh token, a secret or a cookie.
struct StatusPage: Sendable, Equatable {
    struct Identity: Sendable, Equatable {
        var status: IdentityStatus
        var lastError: LastError?
    }

    /// The last thing that went wrong for an identity, shown until something newer does.
    struct LastError: Sendable, Equatable {
        var message: String
        /// The configuration key to fix, when the error is one of configuration.
        var configKey: String?
        var at: Date
    }

    struct Route: Sendable, Equatable {
        var name: String
        var pathPrefix: String
        /// Scheme, host and port of the upstream: no path, and never a credential (an
        /// upstream URL has no user info; validation refuses one).
        var upstream: String
        /// nil for a route that injects no identity.
        var identity: RouteStatus?
    }

    var identities: [Identity]
    var routes: [Route]
    /// Newest first.
    var events: [RecordedAuthEvent]
    /// When the serve started, for its uptime.
    var startedAt: Date
    var now: Date
}

extension StatusPage {
    /// The page of `report`, taken at `now`, for a configuration with `routes`; `events`
    /// are what the serve's recorder holds.
    init(report: StatusReport, routes: [RouteConfig], events: AuthEventRing, startedAt: Date, now: Date) {
        let identities = report.identities.map { status in
            Identity(status: status, lastError: Self.lastError(of: status, failures: events.lastFailures))
        }
        let injecting = Dictionary(report.routes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let routes = routes.map { route in
            Route(name: route.name, pathPrefix: route.pathPrefix, upstream: UpstreamTarget(url: route.upstream.url)?.origin ?? "",
                  identity: injecting[route.name])
        }
        self.init(identities: identities, routes: routes, events: events.newestFirst, startedAt: startedAt, now: now)
    }

    /// An identity's last error: for now the last `failed` event the recorder saw for it.
    /// Where the status itself comes to carry one, it is read here.
    static func lastError(of status: IdentityStatus, failures: [String: RecordedAuthEvent]) -> LastError? {
        failures[status.name].map { failure in
            LastError(message: failure.event.detail ?? "failed", configKey: nil, at: failure.at)
        }
    }
}
