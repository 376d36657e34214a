#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer

/// What the proxy does with a request head, decided without I/O from the head, the
/// listener it arrived on and the configuration's routes, listener checks and identities:
/// the proxy's inbound checks in one place, in the order they apply. A class: as a struct,
/// its tables were copied out of the context (retains and releases) on every request.
final class Admission: Sendable {
    let routes: RouteTable
    let policies: [ListenerPolicy]
    /// By name; routes that inject an identity's token look theirs up here.
    let identities: [String: Identity]
    /// Calls handoff endpoints; nil when no route has one.
    let handoffCaller: HandoffCaller?

    init(routes: RouteTable, policies: [ListenerPolicy], identities: [String: Identity], handoffCaller: HandoffCaller?) {
        self.routes = routes
        self.policies = policies
        self.identities = identities
        self.handoffCaller = handoffCaller
    }

    /// One of the proxy's own endpoints, answered locally.
    enum Endpoint {
        case health
        case readiness
        case metrics
        case identities
        case statusPage(path: Substring)
        /// `/.latchkey/login?token=…` on a listener with `inbound.session`.
        case loginLink(SessionGate)

    }

    /// A request to forward: the route, the identity whose token it injects, and what the
    /// upstream request and the response's rewriting are made from.
    struct Forward {
        let route: Route
        let identity: Identity?
        let blueprint: RequestBlueprint
        let rewriter: ResponseRewriter
    }

    enum Decision {
        case serve(Endpoint)
        case refuse(ErrorDocument, route: Route?)
        /// A refusal whose answer carries fields the client must act on (a 407's
        /// `Proxy-Authenticate`).
        case challenge(ErrorDocument, HTTPFields)
        /// Forward the request to the route's upstream.
        case forward(Forward)
        /// Hand a browser the route's web session first, then send it to `destination`.
        case handOff(Forward, HandoffConfig, HandoffCaller, destination: String)
        /// A forward listener's CONNECT: answer 200 and carry the tunnel.
        case tunnel(TunnelPlan)
        /// Send the handshake of a protocol switch to the route's upstream, then relay the
        /// new protocol's bytes.
        case upgrade(Forward, UpgradePlan)
    }

    /// `credentials`: the credential values in force; `now` for the session cookie's expiry,
    /// read only on listeners with sessions.
    /// `clientSubject`: the verified client certificate's subject, on a TLS connection that
    /// presented one. `tunnel`: inside an intercepted CONNECT tunnel, the host and port the
    /// client connected to.
    func decide(_ head: RequestHead, listener: Int, peer: SocketAddress?, clientSubject: String?, tunnel: TunnelOrigin? = nil,
                credentials: CredentialSnapshot, now: () -> Date) -> Decision {
        // Health and readiness say nothing secret and are probed without credentials
        // (Docker's HEALTHCHECK, a kubelet at the pod's address), so they come before
        // every check.
        // The proxy's own paths all start with `/.latchkey`: one comparison spares every
        // other request the rest.
        let ownPath = head.target.hasBytePrefix(StatusPageEndpoint.ownPathPrefix)
        if ownPath, head.target == "/.latchkey/health" { return .serve(.health) }
        if ownPath, head.target == Readiness.path { return .serve(.readiness) }
        let policy = policies[listener]
        if let forward = policy.forward {
            let requester = Requester(listener: listener, peer: peer, clientSubject: clientSubject, credentials: credentials)
            if let tunnel { return decideInTunnel(head, from: requester, tunnel: tunnel, policy: policy) }
            if let decision = decideForward(head, from: requester, forward: forward, policy: policy) { return decision }
        }
        let host = head.fields[.host]

        guard policy.acceptsHost(host) else {
            return refuse(421, "unknown_host", "this proxy does not answer for that Host; add it to the listener's allowed_hosts")
        }
        if let refusal = inboundRefusal(head, policy: policy, clientSubject: clientSubject, credentials: credentials, now: now) {
            return refusal
        }
        guard let target = RequestTarget(head.target) else {
            return refuse(400, "bad_request", "the request target must be an absolute path without dot-segments")
        }
        // Metrics, identities and the status page name routes and identities, and metrics show traffic:
        // only for those who pass the listener's checks above (see MetricsEndpoint).
        if ownPath, MetricsEndpoint.serves(path: target.path) { return .serve(.metrics) }
        if ownPath, IdentitiesEndpoint.serves(path: target.path) { return .serve(.identities) }
        if ownPath, StatusPageEndpoint.serves(path: target.path) { return .serve(.statusPage(path: target.path)) }
        if policy.forward != nil { return Self.notProxied }
        // `/.latchkey/handoff?to=PAGE` hands off for PAGE's route, then sends the browser there.
        var requestedHandoff: String?
        var routedPath = target.path
        if ownPath, target.path == HandoffDestination.path {
            switch HandoffDestination.page(query: target.query) {
            case .page(let page) where head.method == "GET" || head.method == "HEAD":
                requestedHandoff = page
                routedPath = RequestTarget(page)?.path ?? routedPath
            case .page:
                return refuse(405, "method_not_allowed", "\(HandoffDestination.path) takes GET or HEAD")
            case .refused(let document):
                return .refuse(document, route: nil)
            }
        }
        // Lower-cased only for tables that match on it.
        let routeHost = routes.anyRouteNamesHost ? host.map { Substring(HostAuthority.split($0).host.lowercased()) } : nil
        guard let route = routes.match(listener: listener, path: routedPath, host: routeHost) else {
            return refuse(404, "no_route", "no route matches this request's path")
        }
        if requestedHandoff != nil, route.handoff == nil || route.keepsCookies {
            let reason = route.keepsCookies ? "keeps its web session in the proxy (jar: proxy)" : "has no handoff"
            return refuse(404, "no_route", "the route of that page \(reason)", on: route)
        }
        let requester = Requester(listener: listener, peer: peer, clientSubject: clientSubject, credentials: credentials)
        return decide(head, from: requester, on: route, target: target, clientHost: host, clientUsesTLS: policy.clientsUseTLS, policy: policy,
                      requestedHandoff: requestedHandoff)
    }

    /// A request with its route: the route's own checks, its identity, and what the
    /// upstream request is made from.
    func decide(_ head: RequestHead, from requester: Requester, on route: Route, target: RequestTarget, clientHost host: String?,
                clientUsesTLS: Bool, policy: ListenerPolicy, requestedHandoff: String? = nil) -> Decision {
        let credentials = requester.credentials
        guard route.allow.permits(method: head.method, path: target.path) else {
            return refuse(403, "not_allowed", "the route's allow list does not include \(head.method) on this path", on: route)
        }
        if route.injectsCredentials,
           let refusal = Self.credentialRefusal(head, host: host, policy: policy, overTLS: clientUsesTLS, route: route) {
            return .refuse(refusal, route: route)
        }
        let upgrade: UpgradePlan?
        switch UpgradePlan.judge(head, on: route) {
        case .plain: upgrade = nil
        case .upgrade(let plan): upgrade = plan
        case .refuse(let document): return .refuse(document, route: route)
        }
        for injection in route.injections {
            guard case .credential(let name) = injection.config.source, credentials[name] == nil else { continue }
            return refuse(503, "credential_unavailable", "the credential \(name) has no value", on: route)
        }

        let identity: Identity?
        do {
            identity = try IdentityHeader.choose(for: route, fields: head.fields, isKnown: { identities[$0] != nil })
        } catch {
            return .refuse(error, route: route)
        }

        let inboundHeader: String? = if case .sharedSecret(let header, _) = policy.inbound { header } else { nil }
        let forward = Forward(
            route: route, identity: identity,
            blueprint: RequestBlueprint(target: target, clientHost: host, peer: requester.peer, clientUsesTLS: clientUsesTLS,
                                        inboundHeader: inboundHeader,
                                        credentials: credentials),
            rewriter: ResponseRewriter(route: route, clientHost: host, clientOnLoopback: requester.peer?.isLoopback ?? true,
                                       clientUsesTLS: clientUsesTLS))
        if let upgrade { return .upgrade(forward, upgrade) }
        if let handoff = route.handoff, !route.keepsCookies, let handoffCaller,
           let destination = requestedHandoff ?? (handoff.beforeFirstPage && BrowserNavigation.isNavigation(head)
               && !HandoffMarks.hasHandedOff(head.fields) ? head.target : nil) {
            return .handOff(forward, handoff, handoffCaller, destination: destination)
        }
        return .forward(forward)
    }

    /// The listener's inbound check, if the request fails it (or asks for the session's
    /// login link, which the check answers).
    func inboundRefusal(_ head: RequestHead, policy: ListenerPolicy, clientSubject: String?, credentials: CredentialSnapshot,
                        now: () -> Date) -> Decision? {
        switch policy.inbound {
        case .none:
            return nil
        case .sharedSecret(let header, let name):
            guard let presented = head.fields[HTTPField.Name(header)] else {
                return refuse(401, "unauthorized", "this listener requires the \(header) header")
            }
            guard let expected = credentials[name], constantTimeEquals(presented, expected) else {
                return refuse(403, "forbidden", "the \(header) header does not match")
            }
            return nil
        case .clientCertificate:
            // The handshake already refused clients without one; this holds even if a
            // session were resumed without the verification (defence in depth).
            guard clientSubject != nil else {
                return refuse(401, "unauthorized", "this listener requires a client certificate signed by its client_ca_file")
            }
            return nil
        case .session(let gate):
            if head.target == SessionGate.loginPath || head.target.hasPrefix(SessionGate.loginPath + "?") {
                return .serve(.loginLink(gate))
            }
            guard gate.admits(head.fields, now: now()) else {
                return refuse(401, "unauthorized", "this listener requires a session: open a login link made by `latchkey login-link ROUTE`")
            }
            return nil
        }
    }

    /// Why a request may not spend `route`'s credentials, if it may not: a browser request
    /// from another site (BrowserOriginCheck), or a method with which an upstream may show
    /// the request, credential included, to the client.
    private static func credentialRefusal(_ head: RequestHead, host: String?, policy: ListenerPolicy, overTLS: Bool,
                                          route: Route) -> ErrorDocument? {
        // TRACE echoes the request (RFC 9110 §9.3.8), and an upstream that takes an
        // origin-form CONNECT may do the same.
        if RouteConfig.isRefusable(method: head.method), !route.allowedMethods.contains(head.method) {
            return ErrorDocument(status: 405, error: "method_not_allowed",
                                 message: "\(head.method) is refused on a route that injects credentials; the route's allow_methods may list it",
                                 route: route.name)
        }
        switch BrowserOriginCheck.judge(head.fields, host: host, policy: policy, overTLS: overTLS) {
        case .allowed:
            return nil
        case .ambiguous(let header):
            return ErrorDocument(status: 400, error: "bad_request", message: "more than one \(header) header", route: route.name)
        case .otherSite:
            return ErrorDocument(status: 403, error: "cross_site",
                                 message: "cross-site browser requests may not use this route's credentials", route: route.name)
        }
    }

    func refuse(_ status: Int, _ error: String, _ message: String, on route: Route? = nil) -> Decision {
        .refuse(ErrorDocument(status: status, error: error, message: message, route: route?.name), route: route)
    }
}
