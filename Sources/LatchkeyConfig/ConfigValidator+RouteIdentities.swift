extension ConfigValidator {
    /// `selectable_identities:` on a route: the other identities a request may pick with
    /// `Latchkey-Identity`, each named under `identities:`, once. Only a route that injects
    /// an identity has any to choose from. `injected` is nil when no injection named a
    /// valid identity; `wroteIdentity` says whether one tried (then its own error stands).
    mutating func validateSelectableIdentities(
        _ raw: [ConfigNode]?, injected: String?, wroteIdentity: Bool, identities: Identities, at path: ConfigPath
    ) -> [String] {
        guard let raw else { return [] }
        guard injected != nil || wroteIdentity else {
            diagnostics.error(path, "the route injects no identity",
                              expected: "an inject entry with identity:, whose token the selectable identities replace")
            return []
        }
        if raw.isEmpty {
            diagnostics.error(path, "empty list", expected: "identity names; omit the key when requests may use the route's own identity only")
        }
        var names: [String] = []
        var firstIndex: [String: Int] = [:]
        for (index, name) in raw.enumerated().compactMap({ index, node in node.string().map { (index, $0) } }) {
            if let first = firstIndex[name] {
                diagnostics.error(path[index], "\(name) is listed twice (also [\(first)])", expected: "each identity once")
                continue
            }
            firstIndex[name] = index
            if known(name, in: identities.names, kind: "identity", section: "identities", at: path[index]) { names.append(name) }
        }
        return names
    }
}
