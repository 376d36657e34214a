import LatchkeyConfig
/// A route that injects an identity, as `latchkey status` shows it: the identity requests
/// get when they name none (the configured one, unless `latchkey use` chose another), and
/// those a request may pick with `Latchkey-Identity`.
public struct RouteStatus: Sendable, Equatable {
    public var name: String
    public var identity: String
    public var configured: String
    /// The configured identity first, then the selectable ones.
    public var allowed: [String]
    /// Why the identity is not the one `latchkey use` chose; never a secret.
    public var detail: String?

    public init(name: String, identity: String, configured: String, allowed: [String], detail: String? = nil) {
        self.name = name
        self.identity = identity
        self.configured = configured
        self.allowed = allowed
        self.detail = detail
    }

    /// nil for a route that injects no identity. `chosen` is what `latchkey use` chose for
    /// it; a choice the route does not allow is left aside, as serve leaves it.
    public init?(_ route: RouteConfig, chosen: String?) {
        guard let configured = route.identity else { return nil }
        self.init(name: route.name, identity: configured, configured: configured, allowed: route.allowedIdentities)
        guard let chosen else { return }
        if allowed.contains(chosen) {
            identity = chosen
        } else {
            detail = "`latchkey use` chose \(chosen), which the route does not allow; serve uses \(configured)"
        }
    }
}
