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
        let before = Self.byName(running)
        let after = Self.byName(loaded)
        self.init(
            kept: after.keys.filter { before[$0] == after[$0] }.sorted(),
            added: after.keys.filter { before[$0] == nil }.sorted(),
            changed: after.keys.filter { before[$0] != nil && before[$0] != after[$0] }.sorted(),
            removed: before.keys.filter { after[$0] == nil }.sorted()
        )
    }

    /// The identities that get a new `Identity`: the added and the changed ones.
    public var made: [String] { (added + changed).sorted() }

    /// What decides whether the running object can go on: the configuration and the jar.
    private struct Running: Equatable {
        var config: IdentityConfig
        var keepsCookies: Bool
    }

    private static func byName(_ config: Config) -> [String: Running] {
        let keepingCookies = config.identitiesKeepingCookies
        return Dictionary(config.identities.map { identity in
            (identity.name, Running(config: identity, keepsCookies: keepingCookies.contains(identity.name)))
        }) { first, _ in first }
    }
}
