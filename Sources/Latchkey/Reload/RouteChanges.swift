import LatchkeyConfig
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
        let names = NameComparison(running: running.routes.map { ($0.name, $0) }, loaded: loaded.routes.map { ($0.name, $0) })
        self.init(added: names.added, changed: names.changed, removed: names.removed)
    }
}
