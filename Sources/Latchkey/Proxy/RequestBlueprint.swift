import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyUpstream

/// What an upstream request is made from besides the client's head, kept by the exchange so
/// that the request can be made again with another token (a replay after a renewal, or a
/// start that waited for the identity's first token). A class: it travels from the admission
/// through the decision to the exchange and into the builder, and as a struct each of those
/// steps copied its strings (retained and released them), more than the one allocation
/// costs. The head is the exchange's, lent to `request`: a copy held here retained its
/// strings and arrays once more per request.
final class RequestBlueprint: Sendable {
    let target: RequestTarget
    let clientHost: String?
    let peer: SocketAddress?
    /// The client reached the proxy over TLS: the upstream is told `X-Forwarded-Proto: https`.
    let clientUsesTLS: Bool
    /// The listener's inbound shared-secret header, which never travels upstream.
    let inboundHeader: String?
    let credentials: CredentialSnapshot

    init(target: RequestTarget, clientHost: String?, peer: SocketAddress?, clientUsesTLS: Bool,
         inboundHeader: String?, credentials: CredentialSnapshot) {
        self.target = target
        self.clientHost = clientHost
        self.peer = peer
        self.clientUsesTLS = clientUsesTLS
        self.inboundHeader = inboundHeader
        self.credentials = credentials
    }

    /// `head`: the client's, the one this was made for. `jar`: the identity's cookie jar on
    /// a route with `jar: proxy`.
    func request(for route: Route, head: borrowing RequestHead, token: IssuedToken?, jar: CookieJar?) -> UpstreamRequest {
        UpstreamRequestBuilder.build(
            head: head, route: route, path: target.path, query: target.query, clientHost: clientHost,
            peer: peer, clientUsesTLS: clientUsesTLS, removingField: inboundHeader, cookieJar: jar,
            credential: { $0.value(credentials: credentials, token: token) })
    }
}
