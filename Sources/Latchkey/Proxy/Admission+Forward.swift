#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer

/// Forward listeners (`mode: forward`): requests are routed by the host the client asked
/// for, never by the listener's own name. A host a route names is served with the route's
/// credentials (absolute-form requests, and the requests inside an intercepted CONNECT); a
/// `tunnel:` host is reached without any; every other host is refused, so the listener is
/// never an open proxy.
extension Admission {
    /// Who sent a request: what it brings to the decision besides its head and its
    /// listener's policy. The head travels apart, borrowed: held here, it was copied in and
    /// out (its strings and arrays retained and released) on every request.
    struct Requester {
        let listener: Int
        let peer: SocketAddress?
        let clientSubject: String?
        let credentials: CredentialSnapshot
    }

    /// The intercepted CONNECT tunnel a request came through: the host and port the client
    /// connected to, and whether it spoke TLS inside (`https://`) or plain HTTP (`ws://`
    /// and `http://` clients that tunnel everything).
    struct TunnelOrigin {
        let authority: TargetAuthority
        let overTLS: Bool
    }

    /// What a CONNECT becomes.
    enum TunnelPlan: Equatable {
        /// A route names the host: TLS ends here, with a certificate for the host from the
        /// local CA, and the requests inside are routed by it.
        case intercept(TargetAuthority)
        /// A `tunnel:` host: bytes go through unread.
        case relay(TargetAuthority)
    }

    static let notProxied = Decision.refuse(ErrorDocument(
        status: 400, error: "bad_request",
        message: "this listener is a forward proxy: send requests through it as HTTP_PROXY/HTTPS_PROXY (absolute-form or CONNECT)"),
        route: nil)

    /// A request to a forward listener from outside a tunnel. Nil for origin-form, which
    /// addresses the proxy itself (its health, metrics and status endpoints).
    func decideForward(_ head: RequestHead, from requester: Requester, forward: ListenerPolicy.ForwardPolicy,
                       policy: ListenerPolicy) -> Decision? {
        guard let target = ProxyTarget(method: head.method, target: head.target) else {
            let expected = head.method == "CONNECT" ? "CONNECT takes host:port" : "an absolute URL (http://host/path)"
            return refuse(400, "bad_request", "a forward proxy request's target must be \(expected)")
        }
        if case .origin = target { return nil }
        if let proxyAuthorization = forward.proxyAuthorization {
            let verdict = proxyAuthorization.judge(head.fields, credentials: requester.credentials)
            if verdict != .authorized {
                let refusal = ProxyAuthorization.refusal(verdict)
                return .challenge(refusal.document, refusal.fields)
            }
        }
        // RFC 9110 §7.2: a proxy ignores the Host of an absolute-form request; inside a
        // CONNECT nothing else names the destination. Session listeners are refused by
        // validation: no cookie reaches a proxy.
        if let refusal = inboundRefusal(head, policy: policy, clientSubject: requester.clientSubject, credentials: requester.credentials,
                                        now: Date.init) {
            return refusal
        }
        switch target {
        case .origin:
            return nil
        case .authority(let authority):
            if routes.namesHost(authority.host, listener: requester.listener) { return .tunnel(.intercept(authority)) }
            if forward.tunnels(authority.host) { return .tunnel(.relay(authority)) }
            return Self.hostRefused(authority)
        case .absolute(let scheme, let authority, let path):
            guard let origin = RequestTarget(String(path)) else {
                return refuse(400, "bad_request", "the request path must not contain dot-segments")
            }
            if let route = routes.match(listener: requester.listener, path: origin.path, host: Substring(authority.host), requiringHost: true) {
                let clientHost = authority.port == scheme.defaultPort ? authority.hostForURL : authority.description
                return decide(head, from: requester, on: route, target: origin, clientHost: clientHost, clientUsesTLS: false, policy: policy)
            }
            if forward.tunnels(authority.host), let route = routes.passthrough(scheme: scheme, to: authority) {
                let clientHost = authority.port == scheme.defaultPort ? authority.hostForURL : authority.description
                return decide(head, from: requester, on: route, target: origin, clientHost: clientHost, clientUsesTLS: false, policy: policy)
            }
            return Self.hostRefused(authority)
        }
    }

    /// A request inside an intercepted tunnel: routed by the CONNECT's host, which passed
    /// the listener's checks when the tunnel opened. Its Host must name the same host
    /// (RFC 9110 §15.5.20: 421 for a request sent to a connection that does not serve it);
    /// the tunnel's authority is the client's host from then on.
    func decideInTunnel(_ head: RequestHead, from requester: Requester, tunnel: TunnelOrigin, policy: ListenerPolicy) -> Decision {
        guard let target = RequestTarget(head.target) else {
            return refuse(400, "bad_request", "the request target must be an absolute path without dot-segments")
        }
        let authority = tunnel.authority
        let name = authority.hostForURL
        if let host = head.fields[.host], HostAuthority.split(host).host.lowercased() != name {
            return refuse(421, "misdirected_request", "the request's Host is not the host this tunnel was opened to")
        }
        guard let route = routes.match(listener: requester.listener, path: target.path, host: Substring(authority.host), requiringHost: true) else {
            return refuse(404, "no_route", "no route for \(authority.host) matches this request's path")
        }
        let defaultPort: UInt16 = tunnel.overTLS ? 443 : 80
        let clientHost = authority.port == defaultPort ? name : "\(name):\(authority.port)"
        return decide(head, from: requester, on: route, target: target, clientHost: clientHost, clientUsesTLS: tunnel.overTLS, policy: policy)
    }

    /// Never an open proxy: the body names the host, so that the user sees what to add.
    static func hostRefused(_ authority: TargetAuthority) -> Decision {
        .refuse(ErrorDocument(status: 403, error: "host_not_allowed",
                              message: "no route names \(authority.host), and the listener's tunnel list does not include it",
                              host: authority.host), route: nil)
    }
}
