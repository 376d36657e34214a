import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyUpstream

/// What an upstream request is made from, kept by the exchange so that the request can be
/// made again with another token (a replay after a renewal, or a start that waited for the
/// identity's first token).
struct RequestBlueprint {
    let head: RequestHead
    let target: RequestTarget
    let clientHost: String?
    let peer: SocketAddress?
    /// The client reached the proxy over TLS: the upstream is told `X-Forwarded-Proto: https`.
    let clientUsesTLS: Bool
    /// The listener's inbound shared-secret header, which never travels upstream.
    let inboundHeader: String?
    let credentials: CredentialSnapshot

    /// `jar`: the identity's cookie jar on a route with `jar: proxy`.
    func request(for route: Route, token: IssuedToken?, jar: CookieJar?) -> UpstreamRequest {
        var request = UpstreamRequestBuilder.build(
            head: head, route: route, path: target.path, query: target.query, clientHost: clientHost,
            peer: peer, clientUsesTLS: clientUsesTLS, removingField: inboundHeader,
            credential: { $0.value(credentials: credentials, token: token) })
        request.cookieJar = jar
        return request
    }
}
