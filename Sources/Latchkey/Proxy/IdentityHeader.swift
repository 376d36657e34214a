import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyServer

/// `Latchkey-Identity: NAME`: a request asks for one of the identities its route allows
/// (`selectable_identities`). The header is Latchkey's own and never travels upstream. A
/// request whose choice the route does not allow is refused, never served with the
/// default instead: a client that asked to act as bob must not act as alice. So is one
/// sent to a route that injects no identity, where the header would silently mean nothing.
enum IdentityHeader {
    static let name = "Latchkey-Identity"

    /// The identity a request on `route` uses (nil on a route that injects none), or the
    /// refusal. `isKnown` tells a configured identity's name, which a refusal may repeat,
    /// from anything else a client sent, which it never does: a message never carries a
    /// request's bytes. The refusal is thrown: an enum holding it was copied and destroyed
    /// whole on every request, which nearly always has no refusal.
    static func choose(for route: Route, fields: HTTPFields, isKnown: (String) -> Bool) throws(ErrorDocument) -> Identity? {
        guard let asked = fields[.latchkeyIdentity] else { return route.identities?.current }
        guard let identities = route.identities else {
            throw refusal(route, "route \(route.name) injects no identity; send no \(name) header")
        }
        guard fields.values(named: .latchkeyIdentity).count == 1 else {
            throw ErrorDocument(status: 400, error: "bad_request", message: "more than one \(name) header", route: route.name)
        }
        if let identity = identities.named(asked) { return identity }
        let what = isKnown(asked) ? "identity \(asked)" : "an identity this configuration does not have"
        throw refusal(route, "the \(name) header names \(what), which route \(route.name) does not allow "
            + "(allowed: \(identities.names.joined(separator: ", ")))")
    }

    private static func refusal(_ route: Route, _ message: String) -> ErrorDocument {
        ErrorDocument(status: 403, error: "identity_not_allowed", message: message, route: route.name)
    }
}
