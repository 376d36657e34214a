import LatchkeyAuth
import LatchkeyConfig
import Synchronization

/// The identities one route may inject, resolved once at start: the configured one first,
/// then its `selectable_identities`. A request picks one with `Latchkey-Identity`
/// (IdentityHeader); `latchkey use` changes the one requests get when they name none.
/// Reading that default is one relaxed atomic load: the choice costs a route's hot path
/// nothing it would notice.
final class RouteIdentities: Sendable {
    /// Never empty; the configured identity first.
    let allowed: [Identity]
    /// The index in `allowed` of the default.
    private let chosen = Atomic<Int>(0)

    /// nil when the route injects no identity, or names one `identities` does not have.
    init?(_ route: RouteConfig, identities: [String: Identity]) {
        let resolved = route.allowedIdentities.compactMap { identities[$0] }
        guard !resolved.isEmpty, resolved.count == route.allowedIdentities.count else { return nil }
        allowed = resolved
    }

    /// The identity of requests that name none.
    var current: Identity { allowed[chosen.load(ordering: .relaxed)] }

    var configured: Identity { allowed[0] }

    var names: [String] { allowed.map(\.name) }

    func named(_ name: String) -> Identity? {
        allowed.first { $0.name == name }
    }

    /// Makes `name` the default. False, and nothing changes, when the route does not
    /// allow it.
    func use(_ name: String) -> Bool {
        guard let index = allowed.firstIndex(where: { $0.name == name }) else { return false }
        chosen.store(index, ordering: .relaxed)
        return true
    }
}
