import Foundation
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer
import Testing
@testable import Latchkey

/// `Admission.decide`: the inbound checks and routing of a request head, with no server.
@Suite struct AdmissionTests {
    private static let bound = SocketAddress.ipv4(host: "127.0.0.1", port: 8080)
    private static let host = "127.0.0.1:8080"
    private static let key = Injection(target: .header("X-Key"), source: .credential("key"), template: .token)

    private func admission(_ routes: [RouteConfig], listener: ListenerConfig = ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080)),
                           bound: SocketAddress = bound) throws -> Admission {
        let config = Config(listeners: [listener], routes: routes)
        return Admission(routes: RouteTable(config: config), policies: [try ListenerPolicy(config: listener, bound: bound)],
                         identities: [:], handoffCaller: nil)
    }

    private func route(_ name: String = "api", _ prefix: String = "/api", injections: [Injection] = [key],
                       allowedMethods: [String] = []) -> RouteConfig {
        RouteConfig(name: name, pathPrefix: prefix, upstream: UpstreamConfig(url: "http://up.example"), injections: injections,
                    allowedMethods: allowedMethods)
    }

    private func decide(_ admission: Admission, _ method: String = "GET", _ target: String = "/api/x",
                        _ fields: [(String, String)] = [], credentials: [String: String] = ["key": "k"],
                        clientSubject: String? = nil) -> Admission.Decision {
        var head = HTTPFields()
        head.append(name: "Host", value: Self.host)
        for (name, value) in fields { head.append(name: name, value: value) }
        return admission.decide(RequestHead(method: method, target: target, fields: head), listener: 0, peer: nil, clientSubject: clientSubject,
                                credentials: CredentialSnapshot(generation: 1, values: credentials), now: Date.init)
    }

    /// An mTLS listener forwards only requests whose connection presented a verified client
    /// certificate, whatever the handshake let through.
    @Test func aClientCertificateListenerRefusesARequestWithoutOne() throws {
        let listener = ListenerConfig(name: "mesh", address: .tcp(host: "127.0.0.1", port: 8080), inbound: .clientCertificate(caFile: "/ca.pem"),
                                      tls: ListenerTLSConfig(certificate: .localCA))
        let admission = try admission([route()], listener: listener)
        #expect(refusal(decide(admission)) ?? (0, "") == (401, "unauthorized"))
        guard case .forward = decide(admission, clientSubject: "CN=alice") else {
            Issue.record("a request with a verified client certificate is forwarded")
            return
        }
    }

    /// The refusal's status and error code, or nil for any other decision.
    private func refusal(_ decision: Admission.Decision) -> (Int, String)? {
        guard case .refuse(let document, _) = decision else { return nil }
        return (document.status, document.error)
    }

    private func forwardedRoute(_ decision: Admission.Decision) -> String? {
        guard case .forward(let forward) = decision else { return nil }
        return forward.route.name
    }

    @Test func aRoutedRequestIsForwardedWithItsRoute() throws {
        let admission = try admission([route(), route("other", "/other")])
        #expect(forwardedRoute(decide(admission)) == "api")
        #expect(forwardedRoute(decide(admission, "GET", "/other")) == "other")
    }

    @Test func healthAndReadinessComeBeforeTheHostCheck() throws {
        let admission = try admission([route()])
        var head = RequestHead(method: "GET", target: "/.latchkey/health")
        head.fields.append(name: "Host", value: "evil.example")
        let snapshot = CredentialSnapshot(generation: 1, values: [:])
        guard case .serve(.health) = admission.decide(head, listener: 0, peer: nil, clientSubject: nil, credentials: snapshot, now: Date.init) else {
            Issue.record("health was not served")
            return
        }
        head.target = Readiness.path
        guard case .serve(.readiness) = admission.decide(head, listener: 0, peer: nil, clientSubject: nil, credentials: snapshot, now: Date.init) else {
            Issue.record("readiness was not served")
            return
        }
    }

    @Test func adminEndpointsAreServedAfterTheChecks() throws {
        let admission = try admission([route()])
        var served: [String] = []
        if case .serve(.metrics) = decide(admission, "GET", "/.latchkey/metrics") { served.append("metrics") }
        if case .serve(.identities) = decide(admission, "GET", "/.latchkey/identities") { served.append("identities") }
        #expect(served == ["metrics", "identities"])
    }

    @Test func refusalsInTheOrderTheyApply() throws {
        let admission = try admission([route()])
        var head = RequestHead(method: "GET", target: "/api/x")
        head.fields.append(name: "Host", value: "evil.example")
        let decision = admission.decide(head, listener: 0, peer: nil, clientSubject: nil, credentials: CredentialSnapshot(generation: 1, values: [:]), now: Date.init)
        #expect(refusal(decision)! == (421, "unknown_host"))
        #expect(refusal(decide(admission, "GET", "/api/../x"))! == (400, "bad_request"))
        #expect(refusal(decide(admission, "GET", "/nothing"))! == (404, "no_route"))
        #expect(refusal(decide(admission, credentials: [:]))! == (503, "credential_unavailable"))
        #expect(refusal(decide(admission, "GET", "/api/x", [("Latchkey-Identity", "bob")]))! == (403, "identity_not_allowed"))
    }

    @Test func aHandoffIsRefusedWhereTheRouteHasNone() throws {
        let admission = try admission([route()])
        #expect(refusal(decide(admission, "GET", "/.latchkey/handoff?to=/api/x"))! == (404, "no_route"))
        #expect(refusal(decide(admission, "POST", "/.latchkey/handoff?to=/api/x"))! == (405, "method_not_allowed"))
        #expect(refusal(decide(admission, "GET", "/.latchkey/handoff?to=//evil.example"))! == (400, "bad_request"))
    }

    // MARK: item 6: methods that show the request

    @Test(arguments: ["TRACE", "CONNECT"])
    func traceAndOriginFormConnectAreRefusedWhereCredentialsAreInjected(_ method: String) throws {
        let admission = try admission([route(), route("plain", "/plain", injections: []), route("echo", "/echo", allowedMethods: [method])])
        let refused = try #require(refusal(decide(admission, method, "/api/x")))
        #expect(refused == (405, "method_not_allowed"))
        #expect(forwardedRoute(decide(admission, method, "/plain")) == "plain")
        #expect(forwardedRoute(decide(admission, method, "/echo")) == "echo")
        // Methods are case-sensitive: `trace` is another method, forwarded as any.
        #expect(forwardedRoute(decide(admission, method.lowercased(), "/api/x")) == "api")
    }

    // MARK: item 6: Origin and Sec-Fetch-Site

    @Test(arguments: ["Origin", "Sec-Fetch-Site"])
    func twoLinesOfABrowserHeaderAreRefused(_ name: String) throws {
        let admission = try admission([route(), route("plain", "/plain", injections: [])])
        let value = name == "Origin" ? "http://\(Self.host)" : "same-origin"
        let refused = try #require(refusal(decide(admission, "GET", "/api/x", [(name, value), (name, value)])))
        #expect(refused == (400, "bad_request"))
        #expect(forwardedRoute(decide(admission, "GET", "/plain", [(name, value), (name, value)])) == "plain")
    }

    @Test func aSecondOriginCannotHideACrossSiteOne() throws {
        let admission = try admission([route()])
        let decision = decide(admission, "GET", "/api/x", [("Origin", "http://\(Self.host)"), ("Origin", "https://evil.example")])
        #expect(refusal(decision) != nil)
    }

    @Test func sameSiteIsRefusedOnALoopbackListener() throws {
        let admission = try admission([route(), route("plain", "/plain", injections: [])])
        #expect(refusal(decide(admission, "GET", "/api/x", [("Sec-Fetch-Site", "same-site")]))! == (403, "cross_site"))
        #expect(forwardedRoute(decide(admission, "GET", "/plain", [("Sec-Fetch-Site", "same-site")])) == "plain")
        #expect(forwardedRoute(decide(admission, "GET", "/api/x", [("Sec-Fetch-Site", "same-origin")])) == "api")
    }

    @Test func sameSiteIsAllowedOnANonLoopbackListener() throws {
        let listener = ListenerConfig(name: "main", address: .tcp(host: "0.0.0.0", port: 8080), allowedHosts: ["127.0.0.1"], inbound: .open)
        let admission = try admission([route()], listener: listener, bound: .ipv4(host: "0.0.0.0", port: 8080))
        #expect(forwardedRoute(decide(admission, "GET", "/api/x", [("Sec-Fetch-Site", "same-site")])) == "api")
    }

    @Test func aListedOriginMayUseTheCredentials() throws {
        let listener = ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080), allowedOrigins: ["http://localhost:3000"])
        let admission = try admission([route()], listener: listener)
        let listed = [("Origin", "http://LOCALHOST:3000"), ("Sec-Fetch-Site", "same-site")]
        #expect(forwardedRoute(decide(admission, "POST", "/api/x", listed)) == "api")
        let unlisted = [("Origin", "http://localhost:3001"), ("Sec-Fetch-Site", "same-site")]
        #expect(refusal(decide(admission, "POST", "/api/x", unlisted))! == (403, "cross_site"))
        // Without an Origin, the page's origin is not known: refused.
        #expect(refusal(decide(admission, "GET", "/api/x", [("Sec-Fetch-Site", "same-site")]))! == (403, "cross_site"))
    }
}
