/// One entry of a route's `allow:` list: a request the route forwards. A route with such a
/// list forwards nothing else, so that a program given the proxy (an agent in a sandbox)
/// can do with the credential only what the list says.
public struct AllowRule: Sendable, Equatable {
    /// Upper-case method, or nil for any method.
    public var method: String?
    /// A path pattern on the client's path (before the route's prefix is replaced): `*`
    /// matches within one segment, `**` across segments (`/repos/**`).
    public var path: String

    public init(method: String?, path: String) {
        self.method = method
        self.path = path
    }
}
