import Foundation
@testable import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyConfig
import Testing
@testable import Latchkey

/// The pieces of the browser handoff that need no I/O: the rewritten cookies, the guard, the
/// destination of `/.latchkey/handoff`, navigation detection and the proxy's own cookies.
@Suite struct HandoffTests {
    private static func route(prefix: String = "/app", upstream: String = "https://3.basecamp.example/4242") -> Route {
        let config = Config(listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))],
                            routes: [RouteConfig(name: "web", pathPrefix: prefix, upstream: UpstreamConfig(url: upstream),
                                                 handoff: HandoffConfig(url: upstream + "/session"))])
        return RouteTable(config: config).match(listener: 0, path: Substring(prefix), host: nil)!
    }

    private let route = Self.route()

    /// Another route of the same configuration (index 1), under the same prefix's parent.
    private static var secondRoute: Route {
        let config = Config(listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))],
                            routes: [RouteConfig(name: "web", pathPrefix: "/app", upstream: UpstreamConfig(url: "https://a.example")),
                                     RouteConfig(name: "two", pathPrefix: "/app/projects", upstream: UpstreamConfig(url: "https://b.example"))])
        return RouteTable(config: config).match(listener: 0, path: "/app/projects", host: nil)!
    }
    private let marks = HandoffMarks(signer: MessageSigner(key: Array(repeating: 7, count: 32)))
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func fields(cookie: String) -> HTTPFields {
        var fields = HTTPFields()
        fields.append(name: "Cookie", value: cookie)
        return fields
    }

    private func value(_ setCookie: String) -> String {
        String(setCookie.split(separator: ";")[0])
    }

    @Test func handoffCookiesLoseDomainAndSecureAndGetTheRoutesPath() {
        let rewriter = ResponseRewriter(route: route, clientHost: "127.0.0.1:8080", clientOnLoopback: true, clientUsesTLS: false)
        #expect(rewriter.rewriteHandoffCookie("session=abc; Domain=.basecamp.example; Path=/4242/projects; Secure; HttpOnly; SameSite=Lax")
            == "session=abc; Path=/app/projects; HttpOnly; SameSite=Lax")
        // No Path: the browser would scope it to the redirect's path; the route's prefix instead.
        #expect(rewriter.rewriteHandoffCookie("session=abc; Max-Age=3600") == "session=abc; Max-Age=3600; Path=/app")
        // Whatever the route says about relayed cookies.
        let keeping = ResponseRewriter(route: Self.route(prefix: "/"), clientHost: nil, clientOnLoopback: false, clientUsesTLS: false)
        #expect(keeping.rewriteHandoffCookie("s=1; domain=x.example; path=/; secure") == "s=1; Path=/")
    }

    @Test func overTLSHandoffCookiesAndMarksAreSecure() throws {
        let rewriter = ResponseRewriter(route: route, clientHost: "127.0.0.1:8443", clientOnLoopback: true, clientUsesTLS: true)
        #expect(rewriter.rewriteHandoffCookie("session=abc; Domain=.basecamp.example; Secure; HttpOnly")
            == "session=abc; Secure; HttpOnly; Path=/app")
        #expect(try marks.guardCookie(route: route, target: "/app", secure: true, now: now).hasSuffix("; HttpOnly; SameSite=Lax; Secure"))
        #expect(HandoffMarks.handedOffCookie(route: route, secure: true) == "latchkey_handed_off=1; Path=/app; HttpOnly; SameSite=Lax; Secure")
        #expect(HandoffMarks.clearingGuard(route: route, secure: true) == "latchkey_handoff=; Max-Age=0; Path=/app; HttpOnly; SameSite=Lax; Secure")
    }

    @Test func theGuardHoldsForItsRouteAndPageUntilItExpires() throws {
        let setCookie = try marks.guardCookie(route: route, target: "/app/projects?x=1", secure: false, now: now)
        #expect(setCookie.hasSuffix("; Max-Age=60; Path=/app; HttpOnly; SameSite=Lax"))
        let presented = fields(cookie: "other=1; " + value(setCookie))
        #expect(marks.isGuarded(presented, route: route, target: "/app/projects?x=1", now: now.addingTimeInterval(60)))
        #expect(!marks.isGuarded(presented, route: route, target: "/app/projects?x=1", now: now.addingTimeInterval(61)))
        #expect(!marks.isGuarded(presented, route: route, target: "/app/projects?x=2", now: now))
        #expect(!marks.isGuarded(presented, route: Self.secondRoute, target: "/app/projects?x=1", now: now))
        #expect(HandoffMarks.presentsGuard(presented))
    }

    @Test func aGuardSignedByAnotherProcessOrAlteredIsNotOne() throws {
        let setCookie = try marks.guardCookie(route: route, target: "/app", secure: false, now: now)
        let stranger = HandoffMarks(signer: MessageSigner(key: Array(repeating: 8, count: 32)))
        #expect(!stranger.isGuarded(fields(cookie: value(setCookie)), route: route, target: "/app", now: now))
        let later = value(setCookie).replacingOccurrences(of: "latchkey_handoff=18", with: "latchkey_handoff=19")
        #expect(!marks.isGuarded(fields(cookie: later), route: route, target: "/app", now: now))
    }

    @Test func theHandedOffMarkAndTheGuardsRemoval() {
        #expect(HandoffMarks.handedOffCookie(route: route, secure: false) == "latchkey_handed_off=1; Path=/app; HttpOnly; SameSite=Lax")
        #expect(HandoffMarks.hasHandedOff(fields(cookie: "a=1; latchkey_handed_off=1")))
        #expect(!HandoffMarks.hasHandedOff(fields(cookie: "a=1; xlatchkey_handed_off=1")))
        #expect(HandoffMarks.clearingGuard(route: route, secure: false) == "latchkey_handoff=; Max-Age=0; Path=/app; HttpOnly; SameSite=Lax")
    }

    @Test func theProxysOwnCookiesNeverGoUpstream() {
        var cookies = fields(cookie: "a=1; latchkey_handoff=x.y; b=2")
        cookies.append(name: "Cookie", value: "latchkey_handed_off=1")
        CookieHeader.removeProxyCookies(from: &cookies)
        #expect(cookies.values(named: "Cookie") == ["a=1; b=2"])
        var only = fields(cookie: "latchkey_handoff=x")
        CookieHeader.removeProxyCookies(from: &only)
        #expect(!only.contains("Cookie"))
        #expect(CookieHeader.values(named: "a", in: fields(cookie: "a=1; ab=2;a=3")) == ["1", "3"])
    }

    @Test(arguments: [
        ("to=%2Fprojects%2F7%3Ftab%3Ddocs", "/projects/7?tab=docs"),
        ("x=1&to=/projects", "/projects"),
    ])
    func theDestinationIsAPathOnThisProxy(_ query: String, _ page: String) {
        #expect(HandoffDestination.page(query: Substring(query)) == .page(page))
    }

    @Test(arguments: [
        "", "to=", "to=/a&to=/b", "to=%2F%2Fevil.example", "to=https%3A%2F%2Fevil.example", "to=%2F%5Cevil.example",
        "to=evil", "to=%2Fa%2F..%2Fb", "to=%2Fa%0D%0ASet-Cookie:%20x", "to=%2Fa%23frag", "to=%2Fa%20b",
    ])
    func otherDestinationsAreRefused(_ query: String) {
        guard case .refused(let document) = HandoffDestination.page(query: Substring(query)) else {
            Issue.record("accepted \(query)")
            return
        }
        #expect(document.status == 400 && document.error == "bad_request")
    }

    private func head(_ method: String, _ fields: [(String, String)]) -> RequestHead {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(name: name, value: value) }
        return RequestHead(method: method, target: "/", version: .http1_1, fields: headers, framing: .none)
    }

    @Test func navigationsAreTold() {
        #expect(BrowserNavigation.isNavigation(head("GET", [("Sec-Fetch-Mode", "navigate")])))
        #expect(BrowserNavigation.isNavigation(head("HEAD", [("Accept", "text/html,application/xhtml+xml")])))
        #expect(!BrowserNavigation.isNavigation(head("GET", [("Sec-Fetch-Mode", "cors"), ("Accept", "text/html")])))
        #expect(!BrowserNavigation.isNavigation(head("GET", [("Accept", "application/json")])))
        #expect(!BrowserNavigation.isNavigation(head("POST", [("Sec-Fetch-Mode", "navigate")])))
    }

    @Test func theHandoffRequestCarriesTheRoutesCredentials() {
        let config = Config(listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))],
                            routes: [RouteConfig(name: "web", upstream: UpstreamConfig(url: "https://app.example"), injections: [
                                Injection(target: .header("Authorization"), source: .identity("bc"), template: try! CredentialTemplate(parsing: "Bearer {token}")),
                                Injection(target: .query("account"), source: .credential("acct"), template: .token),
                            ])])
        let route = RouteTable(config: config).match(listener: 0, path: "/", host: nil)!
        let handoff = HandoffConfig(url: "https://app.example/session?v=2")
        let credentials = CredentialSnapshot(generation: 1, values: ["acct": "42"])
        let request = HandoffCaller.request(route: route, handoff: handoff, token: IssuedToken(accessToken: "tok", generation: 1),
                                            credentials: credentials)
        #expect(request.method == "POST")
        #expect(request.url == "https://app.example/session?v=2&account=42")
        #expect(request.fields["Authorization"] == "Bearer tok")
        #expect(request.body.isEmpty)
    }

    @Test func theHandoffRequestCarriesTheCaptureARouteInjects() {
        let config = Config(listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))],
                            routes: [RouteConfig(name: "web", upstream: UpstreamConfig(url: "https://app.example"), injections: [
                                Injection(target: .query("session_id"), source: .identity("tmdb"), template: .token, capture: "session_id"),
                            ])])
        let route = RouteTable(config: config).match(listener: 0, path: "/", host: nil)!
        let token = IssuedToken(accessToken: "tok", generation: 1, captures: ["session_id": "s1"])
        let request = HandoffCaller.request(route: route, handoff: HandoffConfig(url: "https://app.example/session"), token: token,
                                            credentials: CredentialSnapshot(generation: 1, values: [:]))
        #expect(request.url == "https://app.example/session?session_id=s1")
    }
}
