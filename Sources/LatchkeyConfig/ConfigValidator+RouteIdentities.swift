extension ConfigValidator {
    /// `selectable_identities:` on a route: the other identities a request may pick with
    /// `Latchkey-Identity`, each named under `identities:`, once. Only a route that injects
    /// an identity has any to choose from. `injected` is nil when no injection named a
    /// valid identity; `wroteIdentity` says whether one tried (then its own error stands).
    /// Each must make the recipe `captures` the route's injections name.
    mutating func validateSelectableIdentities(
        _ raw: [ConfigNode]?, injected: String?, wroteIdentity: Bool, captures: [String], identities: Identities, at path: ConfigPath
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
            guard known(name, in: identities.names, kind: "identity", section: "identities", at: path[index]) else { continue }
            names.append(name)
            let made = identities.captures(of: name) ?? captures
            if let missing = captures.first(where: { !made.contains($0) }) {
                diagnostics.error(path[index], "\(name) makes no capture '\(missing)', which this route injects",
                                  expected: "a recipe identity that captures \(captures.joined(separator: ", "))")
            }
        }
        return names
    }
}
