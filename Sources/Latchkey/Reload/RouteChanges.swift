/// Which routes a reload adds, changes and removes, by name, for the log line and for the
/// series of the routes that are gone. Every new request is routed by the loaded
/// configuration; these names say what that changed.
public struct RouteChanges: Sendable, Equatable {
    /// Sorted, as are the others.
    public var added: [String]
    public var changed: [String]
    public var removed: [String]

    public init(added: [String] = [], changed: [String] = [], removed: [String] = []) {
        self.added = added
        self.changed = changed
        self.removed = removed
    }

    public init(running: Config, loaded: Config) {
        let before = Dictionary(running.routes.map { ($0.name, $0) }) { first, _ in first }
        let after = Dictionary(loaded.routes.map { ($0.name, $0) }) { first, _ in first }
        self.init(
            added: after.keys.filter { before[$0] == nil }.sorted(),
            changed: after.keys.filter { before[$0] != nil && before[$0] != after[$0] }.sorted(),
            removed: before.keys.filter { after[$0] == nil }.sorted()
        )
    }
}
