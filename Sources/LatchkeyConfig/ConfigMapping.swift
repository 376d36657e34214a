/// A mapping of the document with known keys: each value is read by key, with its type,
/// where the validator uses it. A key whose value is null counts as absent.
struct ConfigMapping {
    /// The keys, merge keys expanded, and their values at the same indices
    /// (`ConfigNode.merged`); for a key given twice (through a merge key), the last value
    /// counts.
    let keys: [String]
    let values: [YAMLNode]
    let path: ConfigPath
    let problems: ShapeProblems

    /// Whether the key is written at all, even with a null value.
    func contains(_ key: String) -> Bool {
        keys.contains(key)
    }

    /// The key's value, or nil when it is absent or null.
    func node(_ key: String) -> ConfigNode? {
        guard let index = keys.lastIndex(of: key), !values[index].isNull else { return nil }
        return ConfigNode(node: values[index], in: path, at: .key(key), problems: problems)
    }

    func string(_ key: String) -> String? { node(key)?.string() }
    func int(_ key: String) -> Int? { node(key)?.int() }
    func bool(_ key: String) -> Bool? { node(key)?.bool() }
    func duration(_ key: String) -> Duration? { node(key)?.duration() }
    func byteSize(_ key: String) -> UInt64? { node(key)?.byteSize() }
    func list(_ key: String) -> [ConfigNode]? { node(key)?.list() }
    func strings(_ key: String) -> [(index: Int, value: String)]? { node(key)?.strings() }
    func ints(_ key: String) -> [(index: Int, value: Int)]? { node(key)?.ints() }
    func entries(_ key: String) -> [(name: String, node: ConfigNode)]? { node(key)?.entries() }

    func mapping(_ key: String, _ keys: [String], expected: String) -> ConfigMapping? {
        node(key)?.mapping(keys, expected: expected)
    }
}
