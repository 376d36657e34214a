import Foundation
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer
import Testing
@testable import Latchkey

/// `Admission.decide` on a forward listener: requests routed by their destination host,
/// CONNECT intercepted, relayed or refused, Proxy-Authorization, inner requests of a tunnel.
@Suite struct AdmissionForwardTests {
    private static let bound = SocketAddress.ipv4(host: "127.0.0.1", port: 3128)
    private static let key = Injection(target: .header("X-Key"), source: .credential("key"), template: .token)
    private static let secret = "s3cret"

    private func admission(proxyAuth: Bool = true, tunnel: [String] = ["*.github.com"]) throws -> Admission {
        let listener = ListenerConfig(name: "fwd", address: .tcp(host: "127.0.0.1", port: 3128), mode: .forward,
                                      tunnel: tunnel.map(HostPattern.init), proxyAuth: proxyAuth ? .inline(Self.secret) : nil)
        let routes = [
            RouteConfig(name: "api", pathPrefix: "/", host: "api.test", upstream: UpstreamConfig(url: "https://localhost:8443"), injections: [Self.key]),
            RouteConfig(name: "wild", pathPrefix: "/v1", host: "*.example.com", upstream: UpstreamConfig(url: "https://up.example"), injections: [Self.key]),
            // A route without host never serves a forward request.
            RouteConfig(name: "anyhost", pathPrefix: "/", upstream: UpstreamConfig(url: "http://other.example"), injections: [Self.key]),
        ]
        let config = Config(listeners: [listener], routes: routes)
        return Admission(routes: RouteTable(config: config), policies: [try ListenerPolicy(config: listener, bound: Self.bound)],
                         identities: [:], handoffCaller: nil)
    }

    private func decide(_ admission: Admission, _ method: String, _ target: String, auth: String? = secret,
                        tunnel: TargetAuthority? = nil, overTLS: Bool = true, fields: [(String, String)] = []) -> Admission.Decision {
        var head = HTTPFields()
        if !fields.contains(where: { $0.0 == "Host" }) { head.append(name: "Host", value: "ignored.example") }
        if let auth { head.append(name: "Proxy-Authorization", value: "Basic " + Data("latchkey:\(auth)".utf8).base64EncodedString()) }
        for (name, value) in fields { head.append(name: name, value: value) }
        let credentials = [Config.proxyAuthSecretName(listener: "fwd"): Self.secret, "key": "k"]
        return admission.decide(RequestHead(method: method, target: target, fields: head), listener: 0, peer: nil, clientSubject: nil,
                                tunnel: tunnel.map { Admission.TunnelOrigin(authority: $0, overTLS: overTLS) }, credentials: CredentialSnapshot(generation: 1, values: credentials), now: Date.init)
    }

    private func refusal(_ decision: Admission.Decision) -> (Int, String, String?)? {
        switch decision {
        case .refuse(let document, _), .challenge(let document, _): (document.status, document.error, document.host)
        default: nil
        }
    }

    private func forwarded(_ decision: Admission.Decision) -> (route: String, path: Substring, clientHost: String?)? {
        guard case .forward(let forward) = decision else { return nil }
        return (forward.route.name, forward.blueprint.target.path, forward.blueprint.clientHost)
    }

    @Test func connectToARoutesHostIsIntercepted() throws {
        let admission = try admission()
        #expect(decideTunnel(admission, "api.test:443") == .intercept(TargetAuthority(host: "api.test", port: 443)))
        #expect(decideTunnel(admission, "Deep.Sub.Example.com:8443") == .intercept(TargetAuthority(host: "deep.sub.example.com", port: 8443)))
    }

    @Test func connectToATunnelHostIsRelayedAndAnyOtherIsRefusedNamingIt() throws {
        let admission = try admission()
        #expect(decideTunnel(admission, "codeload.github.com:443") == .relay(TargetAuthority(host: "codeload.github.com", port: 443)))
        let refused = try #require(refusal(decide(admission, "CONNECT", "evil.example:443")))
        #expect(refused.0 == 403 && refused.1 == "host_not_allowed" && refused.2 == "evil.example")
        // `*.example.com` is not example.com itself.
        #expect(refusal(decide(admission, "CONNECT", "example.com:443"))?.1 == "host_not_allowed")
    }

    @Test func absoluteFormIsRoutedByItsHostNeverByTheHostField() throws {
        let admission = try admission()
        let api = try #require(forwarded(decide(admission, "GET", "http://api.test/repos/a?x=1")))
        #expect(api.route == "api" && api.path == "/repos/a" && api.clientHost == "api.test")
        #expect(try #require(forwarded(decide(admission, "GET", "http://api.test:8080/x"))).clientHost == "api.test:8080")
        #expect(forwarded(decide(admission, "GET", "http://a.example.com/v1/x"))?.route == "wild")
        // The wildcard route serves /v1 only; the host-less route never serves a forward request.
        #expect(refusal(decide(admission, "GET", "http://a.example.com/v2"))?.1 == "host_not_allowed")
        #expect(refusal(decide(admission, "GET", "http://other.example/"))?.1 == "host_not_allowed")
        #expect(refusal(decide(admission, "GET", "http://api.test/a/../b"))?.0 == 400)
    }

    @Test func proxyAuthorizationComesFirst() throws {
        let admission = try admission()
        for auth in [nil, "wrong"] as [String?] {
            #expect(refusal(decide(admission, "CONNECT", "api.test:443", auth: auth))?.0 == 407)
            #expect(refusal(decide(admission, "GET", "http://evil.example/", auth: auth))?.0 == 407)
        }
        let open = try self.admission(proxyAuth: false)
        #expect(decideTunnel(open, "api.test:443", auth: nil) == .intercept(TargetAuthority(host: "api.test", port: 443)))
    }

    @Test func requestsInsideATunnelAreRoutedByItsHost() throws {
        let admission = try admission()
        let tunnel = TargetAuthority(host: "api.test", port: 443)
        // No Proxy-Authorization inside: the CONNECT carried it.
        let inside = try #require(forwarded(decide(admission, "GET", "/repos/a", auth: nil, tunnel: tunnel, fields: [("Host", "api.test")])))
        #expect(inside.route == "api" && inside.clientHost == "api.test")
        // The tunnel names the host: a request inside it for another one is misdirected.
        #expect(refusal(decide(admission, "GET", "/repos/a", auth: nil, tunnel: tunnel, fields: [("Host", "evil.example")]))?.0 == 421)
        let onAnotherPort = TargetAuthority(host: "api.test", port: 8443)
        #expect(forwarded(decide(admission, "GET", "/x", auth: nil, tunnel: onAnotherPort, fields: [("Host", "API.test:8443")]))?.clientHost
            == "api.test:8443")
        // Plain HTTP inside a tunnel to port 80 (a ws:// client): the default port is 80.
        let plain = TargetAuthority(host: "api.test", port: 80)
        #expect(forwarded(decide(admission, "GET", "/x", auth: nil, tunnel: plain, overTLS: false, fields: [("Host", "api.test")]))?.clientHost
            == "api.test")
        let wild = TargetAuthority(host: "a.example.com", port: 443)
        #expect(refusal(decide(admission, "GET", "/v2", auth: nil, tunnel: wild, fields: [("Host", "a.example.com")]))?.1 == "no_route")
        #expect(refusal(decide(admission, "GET", "http://api.test/x", auth: nil, tunnel: tunnel))?.0 == 400)
    }

    @Test func originFormOutsideATunnelReachesOnlyTheProxysOwnEndpoints() throws {
        let admission = try admission()
        var fields = HTTPFields()
        fields.append(name: "Host", value: "127.0.0.1:3128")
        let health = admission.decide(RequestHead(method: "GET", target: "/.latchkey/health", fields: fields), listener: 0, peer: nil,
                                      clientSubject: nil, credentials: CredentialSnapshot(generation: 1, values: [:]), now: Date.init)
        guard case .serve(.health) = health else {
            Issue.record("health is served")
            return
        }
        let page = admission.decide(RequestHead(method: "GET", target: "/repos", fields: fields), listener: 0, peer: nil,
                                    clientSubject: nil, credentials: CredentialSnapshot(generation: 1, values: [:]), now: Date.init)
        #expect(refusal(page)?.0 == 400)
    }

    private func decideTunnel(_ admission: Admission, _ target: String, auth: String? = secret) -> Admission.TunnelPlan? {
        guard case .tunnel(let plan) = decide(admission, "CONNECT", target, auth: auth) else { return nil }
        return plan
    }
}
