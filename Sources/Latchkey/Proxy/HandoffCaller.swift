import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyUpstream

/// What a handoff endpoint gave: the web session's cookies as the endpoint set them, or
/// why there are none.
enum HandoffOutcome: Sendable {
    case session(setCookies: [String])
    case failed(ErrorDocument, fields: HTTPFields = HTTPFields())
}

/// Calls a route's handoff endpoint with the route's credentials (the identity's token as
/// the route injects it) through the control plane's HTTP client: the same libcurl stack
/// and TLS settings as the route's upstream, on the client's own loop, so no proxy loop
/// waits for it.
struct HandoffCaller: Sendable {
    let client: AuthHTTPClient

    /// Reports once, on any thread. An endpoint that refuses the token as the route's
    /// upstream would (`renew_on`) gets one more call with a renewed token.
    /// `jar`: the proxy's jar for the route (`jar: proxy`), which takes the endpoint's
    /// cookies; nil when they are for a browser.
    func call(route: Route, handoff: HandoffConfig, identity: Identity?, credentials: CredentialSnapshot, jar: CookieJar? = nil,
              report: @escaping @Sendable (HandoffOutcome) -> Void) {
        let call = Call(route: route, handoff: handoff, identity: identity, credentials: credentials, jar: jar, report: report)
        guard let identity else { return send(call, token: nil) }
        let proceed = Self.withToken(of: identity, route: route, report: report) { token in send(call, token: token) }
        if let token = identity.current() { proceed(.success(token)) } else { identity.demand(proceed) }
    }

    /// What one handoff is about, from the first call to the last.
    private struct Call: Sendable {
        let route: Route
        let handoff: HandoffConfig
        let identity: Identity?
        let credentials: CredentialSnapshot
        let jar: CookieJar?
        let report: @Sendable (HandoffOutcome) -> Void
    }

    private func send(_ call: Call, token: IssuedToken?, renewed: Bool = false) {
        let (route, handoff, identity, report) = (call.route, call.handoff, call.identity, call.report)
        var request = Self.request(route: route, handoff: handoff, token: token, credentials: call.credentials)
        request.cookieJar = call.jar
        client.start(request) { result in
            let response: AuthHTTPResponse
            switch result {
            case .success(let answer): response = answer
            case .failure(let error):
                return report(.failed(Self.failure(route, "the handoff endpoint could not be reached (\(error.code))")))
            }
            if !renewed, let identity, identity.renewable, let token, route.renewal.refuses(status: response.status, fields: response.fields, body: response.body) {
                identity.rejected(generation: token.generation, Self.withToken(of: identity, route: route, report: report) { renewedToken in
                    send(call, token: renewedToken, renewed: true)
                })
                return
            }
            guard handoff.expects(status: response.status) else {
                return report(.failed(Self.failure(route, "the handoff endpoint answered \(response.status)")))
            }
            let cookies = response.fields.values(named: .setCookie)
            guard !cookies.isEmpty else {
                return report(.failed(Self.failure(route, "the handoff endpoint answered \(response.status) without a cookie")))
            }
            report(.session(setCookies: cookies))
        }
    }

    /// A waiter for the identity's token that goes on with it, or reports why there is none.
    private static func withToken(of identity: Identity, route: Route, report: @escaping @Sendable (HandoffOutcome) -> Void,
                                  _ next: @escaping @Sendable (IssuedToken) -> Void) -> Identity.Waiter {
        { result in
            if let refusal = route.refusal(for: result, identity: identity.name) {
                report(.failed(refusal.document, fields: refusal.fields))
            } else if case .success(let token) = result {
                next(token)
            }
        }
    }

    /// The endpoint's request: the configured method and URL with the route's injections,
    /// and no body.
    static func request(route: Route, handoff: HandoffConfig, token: IssuedToken?, credentials: CredentialSnapshot) -> AuthHTTPRequest {
        let mark = handoff.url.firstIndex(of: "?")
        let query = mark.map { handoff.url[handoff.url.index(after: $0)...] }
        let injected = UpstreamRequestBuilder.injections(of: route, query: query) { $0.value(credentials: credentials, token: token) }
        var url = String(handoff.url[..<(mark ?? handoff.url.endIndex)])
        UpstreamRequestBuilder.appendQuery(to: &url, query: query, injected: injected.query)
        return AuthHTTPRequest(method: handoff.method, url: url, fields: injected.fields, options: route.options)
    }

    private static func failure(_ route: Route, _ message: String) -> ErrorDocument {
        ErrorDocument(status: 502, error: "handoff_failed", message: "no web session for this page: \(message)", route: route.name)
    }
}
