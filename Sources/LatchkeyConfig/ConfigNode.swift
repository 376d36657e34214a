/// A node of the YAML document and its place in it. The validator reads the document
/// through these: each value is read where it is used, and each problem with its shape
/// (a list where a string belongs, an unknown key) is recorded with the node's path, by
/// which the loader finds its line.
struct ConfigNode {
    let node: YAMLNode
    let problems: ShapeProblems
    /// The path is made when it is asked for, mostly for a problem: most values are read
    /// once and are fine, and making each one's path was 2% of loading 10,000 routes.
    private let parent: ConfigPath
    private let last: ConfigPath.Component?

    var path: ConfigPath {
        last.map { parent.appending($0) } ?? parent
    }

    init(node: YAMLNode, path: ConfigPath, problems: ShapeProblems) {
        self.node = node
        self.problems = problems
        parent = path
        last = nil
    }

    /// The node at `component` of `parent`.
    init(node: YAMLNode, in parent: ConfigPath, at component: ConfigPath.Component, problems: ShapeProblems) {
        self.node = node
        self.problems = problems
        self.parent = parent
        last = component
    }

    var content: YAMLNode.Content { node.content }

    /// A scalar's text, whatever it looks like (`8080` reads as "8080").
    func string(expected: String = "a string") -> String? {
        guard case .scalar(let scalar) = content else {
            problems.wrongType(path, expected: expected)
            return nil
        }
        return scalar.text
    }

    /// A YAML 1.1 integer (`8080`, `0x1F`, `1_000`).
    func int() -> Int? { scalar(\.int, expected: "an integer") }

    /// `true`/`false` and YAML 1.1's `yes`/`no`/`on`/`off`, unquoted.
    func bool() -> Bool? { scalar(\.bool, expected: "true or false") }

    func duration() -> Duration? {
        guard let text = string(expected: ConfigScalars.durationExpectation) else { return nil }
        guard let value = ConfigScalars.duration(text) else {
            problems.invalid(path, "invalid duration", expected: ConfigScalars.durationExpectation)
            return nil
        }
        return value
    }

    func byteSize() -> UInt64? {
        guard let text = string(expected: ConfigScalars.byteSizeExpectation) else { return nil }
        guard let value = ConfigScalars.byteSize(text) else {
            problems.invalid(path, "invalid size", expected: ConfigScalars.byteSizeExpectation)
            return nil
        }
        return value
    }

    /// The node as a mapping whose keys are `keys`; any other key is reported as unknown.
    /// - Parameters:
    ///   - expected: what to say when the node is not a mapping.
    ///   - extensionPrefix: keys starting with it are ignored (`x-` at the top level, as in
    ///     Compose files, to hold YAML anchors).
    func mapping(_ keys: [String], expected: String, extensionPrefix: String? = nil) -> ConfigMapping? {
        guard case .mapping(let mapping) = content else {
            problems.wrongType(path, expected: expected)
            return nil
        }
        let (present, values) = Self.merged(mapping)
        let path = path
        for key in present where !keys.contains(key) {
            if let extensionPrefix, key.hasPrefix(extensionPrefix) { continue }
            problems.unknownKey(path / key, name: key, known: keys)
        }
        return ConfigMapping(keys: present, values: values, path: path, problems: problems)
    }

    /// The node as a list, each element with its index in the document.
    func list() -> [ConfigNode]? {
        guard case .sequence(let sequence) = content else {
            problems.wrongType(path, expected: "a list")
            return nil
        }
        let path = path
        return sequence.enumerated().map { ConfigNode(node: $1, in: path, at: .index($0), problems: problems) }
    }

    /// A mapping whose keys the user chooses (credential and identity names), in document
    /// order; a name given twice (through a merge key) keeps its last value.
    func entries() -> [(name: String, node: ConfigNode)]? {
        guard case .mapping(let mapping) = content else {
            problems.wrongType(path, expected: "a mapping of names to entries")
            return nil
        }
        let (keys, values) = Self.merged(mapping)
        var names: [String] = []
        var byName: [String: YAMLNode] = [:]
        byName.reserveCapacity(keys.count)
        for (key, value) in zip(keys, values) where byName.updateValue(value, forKey: key) == nil {
            names.append(key)
        }
        let path = path
        return names.map { ($0, ConfigNode(node: byName[$0]!, in: path, at: .key($0), problems: problems)) }
    }

    /// Each element's text; an element that is not a scalar is reported and skipped.
    func strings() -> [(index: Int, value: String)]? {
        list()?.enumerated().compactMap { index, element in element.string().map { (index, $0) } }
    }

    /// Each element as an integer; one that is not is reported and skipped.
    func ints() -> [(index: Int, value: Int)]? {
        list()?.enumerated().compactMap { index, element in element.int().map { (index, $0) } }
    }

    private func scalar<T>(_ read: (YAMLScalar) -> T?, expected: String) -> T? {
        guard case .scalar(let scalar) = content, let value = read(scalar) else {
            problems.wrongType(path, expected: expected)
            return nil
        }
        return value
    }

    /// The mapping's keys and their values at the same indices, merge keys (a plain `<<`:
    /// `<<: *defaults`) expanded, as YAML 1.1's merge type says: the merged pairs first, so
    /// that the mapping's own keys override them. Keys that are not scalars are left out:
    /// no config key is one.
    static func merged(_ mapping: [YAMLPair]) -> (keys: [String], values: [YAMLNode]) {
        var keys: [String] = []
        var values: [YAMLNode] = []
        keys.reserveCapacity(mapping.count)
        values.reserveCapacity(mapping.count)
        var merges: [[YAMLPair]] = []
        for pair in mapping {
            guard case .scalar(let scalar) = pair.key.content else { continue }
            guard scalar.isPlain, scalar.text == "<<" else {
                keys.append(scalar.text)
                values.append(pair.value)
                continue
            }
            switch pair.value.content {
            case .mapping(let inner): merges.append(inner)
            // Earlier mappings in the list take precedence over later ones.
            case .sequence(let sequence): for case .mapping(let inner) in sequence.reversed().map(\.content) { merges.append(inner) }
            default: break
            }
        }
        guard !merges.isEmpty else { return (keys, values) }
        var mergedKeys: [String] = []
        var mergedValues: [YAMLNode] = []
        for inner in merges {
            let (innerKeys, innerValues) = merged(inner)
            mergedKeys += innerKeys
            mergedValues += innerValues
        }
        return (mergedKeys + keys, mergedValues + values)
    }
}
