import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer
import LatchkeyUpstream

/// What an upstream request is made from, kept by the exchange so that the request can be
/// made again with another token (a replay after a renewal, or a start that waited for the
/// identity's first token). A class: it travels from the admission through the decision to
/// the exchange and into the builder, and as a struct each of those steps copied its dozen
/// strings and arrays (retained and released them), more than the one allocation costs.
final class RequestBlueprint: Sendable {
    let head: RequestHead
    let target: RequestTarget
    let clientHost: String?
    let peer: SocketAddress?
    /// The client reached the proxy over TLS: the upstream is told `X-Forwarded-Proto: https`.
    let clientUsesTLS: Bool
    /// The listener's inbound shared-secret header, which never travels upstream.
    let inboundHeader: String?
    let credentials: CredentialSnapshot

    init(head: RequestHead, target: RequestTarget, clientHost: String?, peer: SocketAddress?, clientUsesTLS: Bool,
         inboundHeader: String?, credentials: CredentialSnapshot) {
        self.head = head
        self.target = target
        self.clientHost = clientHost
        self.peer = peer
        self.clientUsesTLS = clientUsesTLS
        self.inboundHeader = inboundHeader
        self.credentials = credentials
    }

    /// `jar`: the identity's cookie jar on a route with `jar: proxy`.
    func request(for route: Route, token: IssuedToken?, jar: CookieJar?) -> UpstreamRequest {
        UpstreamRequestBuilder.build(
            head: head, route: route, path: target.path, query: target.query, clientHost: clientHost,
            peer: peer, clientUsesTLS: clientUsesTLS, removingField: inboundHeader, cookieJar: jar,
            credential: { $0.value(credentials: credentials, token: token) })
    }
}
