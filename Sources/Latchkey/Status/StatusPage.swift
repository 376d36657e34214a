#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig

/// What the status page (`GET /.latchkey/`) shows a person: the running serve's status
/// report (what `/.latchkey/identities` answers), each identity with its last error, every
/// route with where it goes, and the recent auth events. Names, states and times only:
/// never a token, a refresh token, a secret or a cookie.
struct StatusPage: Sendable, Equatable {
    struct Identity: Sendable, Equatable {
        var status: IdentityStatus
        var lastError: FailureRecord?
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

    /// An identity's last error: its status's own (the last failed token request since its
    /// last token, with the configuration key when the configuration is wrong), else the last
    /// `failed` event the recorder saw for it (a store that cannot be read or written, a
    /// check at start), unless a token came after that.
    static func lastError(of status: IdentityStatus, failures: [String: RecordedAuthEvent]) -> FailureRecord? {
        if let own = status.lastError { return own }
        guard let failure = failures[status.name], failure.at > status.obtainedAt ?? .distantPast else { return nil }
        return FailureRecord(message: failure.event.detail ?? "failed", at: failure.at)
    }
}
