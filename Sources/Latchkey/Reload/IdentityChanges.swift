import LatchkeyConfig
/// What a reload does to each identity, decided from the two configurations alone. An
/// identity whose configuration is equal keeps its running `Identity` (its token, the
/// requests waiting for one, its cookie jar, its refresh timer); one that changed gets a new
/// `Identity`, which restores from the token store as at start; one that is gone stops.
/// Whether the proxy keeps the identity's cookies (`jar: proxy` on a route) is part of its
/// configuration: the running object has a jar or has none.
public struct IdentityChanges: Sendable, Equatable {
    /// Names in both configurations, configured the same. Sorted, as are the others.
    public var kept: [String]
    /// Names only the loaded configuration has.
    public var added: [String]
    /// Names in both, configured differently.
    public var changed: [String]
    /// Names only the running configuration has.
    public var removed: [String]

    public init(kept: [String] = [], added: [String] = [], changed: [String] = [], removed: [String] = []) {
        self.kept = kept
        self.added = added
        self.changed = changed
        self.removed = removed
    }

    public init(running: Config, loaded: Config) {
        let names = NameComparison(running: Self.entries(running), loaded: Self.entries(loaded))
        self.init(kept: names.same, added: names.added, changed: names.changed, removed: names.removed)
    }

    /// The identities that get a new `Identity`: the added and the changed ones.
    public var made: [String] { (added + changed).sorted() }

    /// What decides whether the running object can go on: the configuration and the jar.
    private struct Running: Equatable {
        var config: IdentityConfig
        var keepsCookies: Bool
    }

    private static func entries(_ config: Config) -> [(String, Running)] {
        let keepingCookies = config.identitiesKeepingCookies
        return config.identities.map { identity in
            (identity.name, Running(config: identity, keepsCookies: keepingCookies.contains(identity.name)))
        }
    }
}
