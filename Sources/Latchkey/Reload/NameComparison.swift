/// The names of a running and a loaded configuration's entries (routes, identities) split by
/// what a reload does with them, each list sorted.
struct NameComparison: Equatable {
    /// In both, equal.
    var same: [String]
    /// Only in the loaded configuration.
    var added: [String]
    /// In both, different.
    var changed: [String]
    /// Only in the running configuration.
    var removed: [String]

    /// Names are unique in a valid configuration; should one come twice, its first entry counts.
    init<Entry: Equatable>(running: [(String, Entry)], loaded: [(String, Entry)]) {
        let before = Dictionary(running) { first, _ in first }
        let after = Dictionary(loaded) { first, _ in first }
        same = after.keys.filter { before[$0] == after[$0] }.sorted()
        added = after.keys.filter { before[$0] == nil }.sorted()
        changed = after.keys.filter { before[$0] != nil && before[$0] != after[$0] }.sorted()
        removed = before.keys.filter { after[$0] == nil }.sorted()
    }
}
