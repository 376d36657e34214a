import LatchkeyConfig
import LatchkeyHTTP

/// What a route does to every request's fields, worked out when the route is made: the
/// client's fields it drops, as one set removed in one pass, and the lines it adds,
/// prepared (`PreparedFieldLine`; an injection's is kept with it, `RouteInjection`) so
/// that a request copies bytes instead of building strings and checking names.
struct UpstreamFieldLines: Sendable {
    /// Framing is re-made for the upstream and Host is set; RFC 9110 §11.7.2: credentials
    /// for this proxy are not the upstream's business, nor is the identity a request picked;
    /// the client's Authorization goes when the route puts its own credentials in, and a
    /// field the route injects replaces the client's.
    let dropped: HTTPFields.NameSet
    /// The names of the header fields the route's injections set.
    let injected: HTTPFields.NameSet
    /// `Host: ` and the upstream's authority; the client's Host is put in `Self.host`.
    let upstreamHost: PreparedFieldLine

    static let host = PreparedFieldLine(name: .host)
    static let forwardedFor = PreparedFieldLine(name: .xForwardedFor)
    static let forwardedHost = PreparedFieldLine(name: .xForwardedHost)
    static let forwardedProtoHTTP = PreparedFieldLine(name: .xForwardedProto, valuePrefix: "http")
    static let forwardedProtoHTTPS = PreparedFieldLine(name: .xForwardedProto, valuePrefix: "https")

    /// `injectedHeaders`: the names of the header fields the route's injections set; any
    /// injection at all (a query's, a cookie's) drops the client's Authorization unless
    /// `passClientAuthorization`.
    init(upstream: UpstreamTarget, injectsCredentials: Bool, injectedHeaders: [HTTPField.Name], passClientAuthorization: Bool,
         marksForwarding: Bool) {
        var dropped: [HTTPField.Name] = [.contentLength, .expect, .host, .proxyAuthorization, .latchkeyIdentity] + injectedHeaders
        if injectsCredentials && !passClientAuthorization { dropped.append(.authorization) }
        // Made anew (`UpstreamRequestBuilder.appendForwarded`): dropped with the rest and
        // appended, where setting each looked for the client's first.
        if marksForwarding { dropped += [.xForwardedFor, .xForwardedProto, .xForwardedHost] }
        self.dropped = HTTPFields.NameSet(dropped)
        injected = HTTPFields.NameSet(injectedHeaders)
        upstreamHost = PreparedFieldLine(name: .host, valuePrefix: upstream.authority)
    }
}
