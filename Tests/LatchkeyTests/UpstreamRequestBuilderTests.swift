@testable import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyConfig
import Testing
@testable import Latchkey

@Suite struct UpstreamRequestBuilderTests {
    private func route(_ injections: [Injection], pass: Bool = false, preserveHost: Bool = false, via: String? = nil) -> Route {
        let config = Config(listeners: [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))],
                            routes: [RouteConfig(name: "r", pathPrefix: "/api", upstream: UpstreamConfig(url: "http://up.example:9000/base"),
                                                 injections: injections, passClientAuthorization: pass, preserveHost: preserveHost, via: via)])
        return RouteTable(config: config).match(listener: 0, path: "/api", host: nil)!
    }

    private func head(_ fields: HTTPFields, target: String = "/api/x?a=1") -> RequestHead {
        RequestHead(method: "GET", target: target, version: .http1_1, fields: fields, framing: .none, keepAlive: true, expectsContinue: false)
    }

    private func build(_ route: Route, _ head: RequestHead, secrets: [String: String] = ["tok": "s3cret value"],
                       overTLS: Bool = false) -> (url: String, fields: HTTPFields) {
        let target = RequestTarget(head.target)!
        let request = UpstreamRequestBuilder.build(head: head, route: route, path: target.path, query: target.query,
                                                   clientHost: head.fields["Host"], peer: .ipv4(host: "127.0.0.1", port: 5555),
                                                   clientUsesTLS: overTLS, removingField: "X-Inbound", credential: { injection in
                                                       if case .credential(let name) = injection.config.source { secrets[name] } else { nil }
                                                   })
        return (request.url, request.fields)
    }

    @Test func headerInjectionReplacesTheClientsAuthorization() {
        let r = route([Injection(target: .header("Authorization"), source: .credential("tok"), template: CredentialTemplate(prefix: "Bearer "))])
        let out = build(r, head(["Host": "127.0.0.1:8080", "Authorization": "Bearer mine", "X-Inbound": "secret"]))
        #expect(out.fields.values(named: "Authorization") == ["Bearer s3cret value"])
        #expect(out.fields["Host"] == "up.example:9000")
        #expect(out.fields["X-Inbound"] == nil)
        #expect(out.url == "http://up.example:9000/base/x?a=1")
    }

    @Test func theIdentityAskedForNeverTravelsUpstream() {
        let r = route([Injection(target: .header("Authorization"), source: .credential("tok"), template: CredentialTemplate(prefix: "Bearer "))])
        let out = build(r, head(["Host": "h", "latchkey-identity": "bob", "Accept": "*/*"]))
        #expect(out.fields["Latchkey-Identity"] == nil)
        #expect(out.fields["Accept"] == "*/*")
    }

    @Test func clientAuthorizationPassedWhenAllowed() {
        let r = route([Injection(target: .header("X-Api-Key"), source: .credential("tok"), template: CredentialTemplate())], pass: true)
        let out = build(r, head(["Host": "h", "Authorization": "Bearer mine"]))
        #expect(out.fields["Authorization"] == "Bearer mine")
        #expect(out.fields["X-Api-Key"] == "s3cret value")
    }

    @Test func queryInjectionEncodesAndReplacesTheClientsValue() {
        let r = route([Injection(target: .query("api_key"), source: .credential("tok"), template: CredentialTemplate())])
        let out = build(r, head(["Host": "h"], target: "/api/x?api_key=forged&b=2"))
        #expect(out.url == "http://up.example:9000/base/x?b=2&api_key=s3cret%20value")
    }

    @Test func cookieInjectionMergesWithTheClientsCookies() {
        let r = route([Injection(target: .cookie("session"), source: .credential("tok"), template: CredentialTemplate())])
        let out = build(r, head(["Host": "h", "Cookie": "a=1; session=forged", "Cookie": "b=2"]))
        #expect(out.fields.values(named: "Cookie") == ["a=1; b=2; session=s3cret value"])
    }

    @Test func everyClientValueAnUpstreamMayReadAsTheInjectedParameterIsRemoved() {
        let r = route([Injection(target: .query("api_key"), source: .credential("tok"), template: CredentialTemplate())])
        let target = "/api/x?api%5Fkey=A&a=1;api_key=B&api_key[]=C&%20api_key=D&b=2&API_KEY=E&q=api_key"
        let out = build(r, head(["Host": "h"], target: target))
        #expect(out.url == "http://up.example:9000/base/x?a=1&b=2&q=api_key&api_key=s3cret%20value")
    }

    @Test func aQueryWithNothingInjectedIsForwardedAsSent() {
        let r = route([Injection(target: .header("X-Key"), source: .credential("tok"), template: CredentialTemplate())])
        let out = build(r, head(["Host": "h"], target: "/api/x?api%5Fkey=A&a=1;b"))
        #expect(out.url == "http://up.example:9000/base/x?api%5Fkey=A&a=1;b")
    }

    @Test func everyClientCookieAnUpstreamMayReadAsAnInjectedOneIsRemoved() {
        let r = route([Injection(target: .cookie("sess"), source: .credential("tok"), template: CredentialTemplate()),
                       Injection(target: .cookie("other"), source: .credential("tok"), template: CredentialTemplate(prefix: "o-"))])
        let out = build(r, head(["Host": "h", "Cookie": "sess =A; theme=dark; sess%5B%5D=B, x=1, Sess=C", "Cookie": "other=D"]))
        #expect(out.fields.values(named: "Cookie") == ["theme=dark; x=1; sess=s3cret value; other=o-s3cret value"])
    }

    @Test func hopByHopForwardedAndVia() {
        let r = route([], preserveHost: true, via: "latchkey")
        let out = build(r, head(["Host": "127.0.0.1:8080", "Connection": "close, X-Hop", "X-Hop": "1", "Keep-Alive": "5",
                                 "X-Forwarded-For": "10.0.0.1", "Authorization": "Bearer mine"]))
        #expect(out.fields["X-Hop"] == nil)
        #expect(out.fields["Keep-Alive"] == nil)
        #expect(out.fields["Connection"] == nil)
        #expect(out.fields["Host"] == "127.0.0.1:8080")
        #expect(out.fields["X-Forwarded-For"] == "10.0.0.1, 127.0.0.1")
        #expect(out.fields["X-Forwarded-Proto"] == "http")
        #expect(out.fields["X-Forwarded-Host"] == "127.0.0.1:8080")
        #expect(out.fields["Via"] == "1.1 latchkey")
        #expect(out.fields["Authorization"] == "Bearer mine")
    }

    /// A field the route injects is sent once, with the credential: the lines the proxy
    /// writes itself (the forwarding fields, Via, Cookie) give way to it.
    @Test func anInjectedFieldIsTheOnlyOneOfItsName() {
        let injected = ["X-Forwarded-Host", "X-Forwarded-For", "Via", "Cookie"].map { name in
            Injection(target: .header(HTTPField.Name(name)), source: .credential("tok"), template: CredentialTemplate(prefix: name + " "))
        }
        let r = route(injected + [Injection(target: .cookie("sid"), source: .credential("tok"), template: CredentialTemplate())],
                      via: "latchkey")
        let out = build(r, head(["Host": "127.0.0.1:8080", "Via": "1.0 earlier", "Cookie": "a=1", "X-Forwarded-For": "10.0.0.1"]))
        for name in ["X-Forwarded-Host", "X-Forwarded-For", "Via", "Cookie"] {
            #expect(out.fields.values(named: HTTPField.Name(name)) == [name + " s3cret value"], "\(name)")
        }
        #expect(out.fields.values(named: "X-Forwarded-Proto") == ["http"])
    }

    @Test func aClientOnATLSListenerIsForwardedAsHTTPS() {
        let out = build(route([]), head(["Host": "127.0.0.1:8443", "X-Forwarded-Proto": "http"]), overTLS: true)
        #expect(out.fields.values(named: "X-Forwarded-Proto") == ["https"])
    }

    // MARK: captures of recipe identities

    /// TMDB's route: the key, the session id the identity's recipe captured, and its token.
    private var tmdbRoute: Route {
        route([Injection(target: .query("api_key"), source: .credential("tok"), template: .token),
               Injection(target: .query("session_id"), source: .identity("tmdb"), template: .token, capture: "session_id"),
               Injection(target: .header("X-Token"), source: .identity("tmdb"), template: CredentialTemplate(prefix: "T "))])
    }

    @Test func anInjectionThatNamesACaptureAttachesItInsteadOfTheToken() {
        let head = head(["Host": "h"], target: "/api/movie?session_id=forged&x=1")
        let blueprint = RequestBlueprint(target: RequestTarget(head.target)!, clientHost: "h", peer: nil, clientUsesTLS: false,
                                         inboundHeader: nil,
                                         credentials: CredentialSnapshot(generation: 1, values: ["tok": "k"]))
        let token = IssuedToken(accessToken: "the token", generation: 1, captures: ["session_id": "s 1", "request_token": "r"])
        let request = blueprint.request(for: tmdbRoute, head: head, token: token, jar: nil)
        #expect(request.url == "http://up.example:9000/base/movie?x=1&api_key=k&session_id=s%201")
        #expect(request.fields["X-Token"] == "T the token")
    }

    @Test func aTokenWithoutACaptureTheRouteInjectsCannotBeInjected() {
        let route = tmdbRoute
        let bare = IssuedToken(accessToken: "t", generation: 1)
        #expect(route.injectedCaptures == ["session_id"])
        #expect(route.missingCapture(in: bare) == "session_id")
        #expect(!route.canInject(bare))
        #expect(!route.canInject(nil))
        #expect(route.canInject(IssuedToken(accessToken: "t", generation: 1, captures: ["session_id": "s"])))

        let plain = self.route([Injection(target: .header("Authorization"), source: .identity("idp"), template: .token)])
        #expect(plain.injectedCaptures.isEmpty)
        #expect(plain.canInject(bare))
    }
}
