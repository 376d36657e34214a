import Yams

/// A node of the YAML document and its place in it. The validator reads the document
/// through these: each value is read where it is used, and each problem with its shape
/// (a list where a string belongs, an unknown key) is recorded with the node's path, by
/// which the loader finds its line.
struct ConfigNode {
    let node: Node
    let problems: ShapeProblems
    /// The path is made when it is asked for, mostly for a problem: most values are read
    /// once and are fine, and making each one's path was 2% of loading 10,000 routes.
    private let parent: ConfigPath
    private let last: ConfigPath.Component?

    var path: ConfigPath {
        last.map { parent.appending($0) } ?? parent
    }

    init(node: Node, path: ConfigPath, problems: ShapeProblems) {
        self.node = node
        self.problems = problems
        parent = path
        last = nil
    }

    /// The node at `component` of `parent`.
    init(node: Node, in parent: ConfigPath, at component: ConfigPath.Component, problems: ShapeProblems) {
        self.node = node
        self.problems = problems
        self.parent = parent
        last = component
    }

    /// YAML's null: a plain empty, `~` or `null` scalar. A key with a null value counts as
    /// absent, as an optional field would.
    static func isNull(_ node: Node) -> Bool {
        guard case .scalar(let scalar) = node, scalar.style == .plain || scalar.style == .any else { return false }
        switch scalar.string {
        case "", "~", "null", "Null", "NULL": return true
        default: return false
        }
    }

    /// A scalar's text, whatever it looks like (`8080` reads as "8080").
    func string(expected: String = "a string") -> String? {
        guard case .scalar(let scalar) = node else {
            problems.wrongType(path, expected: expected)
            return nil
        }
        return scalar.string
    }

    /// YAML 1.1 integers, as Yams reads them (`0x1F`, `1_000`).
    func int() -> Int? { scalar(Int.construct, expected: "an integer") }

    /// `true`/`false` and YAML 1.1's `yes`/`no`/`on`/`off`, unquoted.
    func bool() -> Bool? { scalar(Bool.construct, expected: "true or false") }

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
        guard case .mapping(let mapping) = node else {
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
        guard case .sequence(let sequence) = node else {
            problems.wrongType(path, expected: "a list")
            return nil
        }
        let path = path
        return sequence.enumerated().map { ConfigNode(node: $1, in: path, at: .index($0), problems: problems) }
    }

    /// A mapping whose keys the user chooses (credential and identity names), in document
    /// order; a name given twice (through a merge key) keeps its last value.
    func entries() -> [(name: String, node: ConfigNode)]? {
        guard case .mapping(let mapping) = node else {
            problems.wrongType(path, expected: "a mapping of names to entries")
            return nil
        }
        let (keys, values) = Self.merged(mapping)
        var names: [String] = []
        var byName: [String: Node] = [:]
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

    private func scalar<T>(_ construct: (Node.Scalar) -> T?, expected: String) -> T? {
        guard case .scalar(let scalar) = node, let value = construct(scalar) else {
            problems.wrongType(path, expected: expected)
            return nil
        }
        return value
    }

    /// The mapping's keys and their values at the same indices, merge keys (a plain `<<`,
    /// as Yams' resolver has it: `<<: *defaults`) expanded, as YAML 1.1's merge type says:
    /// the merged pairs first, so that the mapping's own keys override them. Keys that are
    /// not scalars are left out: no config key is one.
    ///
    /// Read by index, each pair once: iterating a `Node.Mapping` copies all its pairs into
    /// an array first, and a list of `(key, value)` pairs made here copied them again for
    /// every search of it.
    static func merged(_ mapping: Node.Mapping) -> (keys: [String], values: [Node]) {
        var keys: [String] = []
        var values: [Node] = []
        keys.reserveCapacity(mapping.count)
        values.reserveCapacity(mapping.count)
        var merges: [Node.Mapping] = []
        for index in mapping.indices {
            let (key, value) = mapping[index]
            guard case .scalar(let scalar) = key else { continue }
            guard scalar.style == .plain, scalar.string == "<<" else {
                keys.append(scalar.string)
                values.append(value)
                continue
            }
            switch value {
            case .mapping(let inner): merges.append(inner)
            // Earlier mappings in the list take precedence over later ones.
            case .sequence(let sequence): for case .mapping(let inner) in sequence.reversed() { merges.append(inner) }
            default: break
            }
        }
        guard !merges.isEmpty else { return (keys, values) }
        var mergedKeys: [String] = []
        var mergedValues: [Node] = []
        for inner in merges {
            let (innerKeys, innerValues) = merged(inner)
            mergedKeys += innerKeys
            mergedValues += innerValues
        }
        return (mergedKeys + keys, mergedValues + values)
    }
}
