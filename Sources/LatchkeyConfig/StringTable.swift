/// A table keyed by strings and read on every request (a listener's Host names, the
/// credentials' values). Most hold a handful of entries: compared in turn, where comparing
/// short strings costs less than hashing the key. A larger table is hashed. Inlinable:
/// made for its value type where it is read, not looked up through witness tables.
public struct StringTable<Value: Sendable>: Sendable {
    @usableFromInline static var fewest: Int { 8 }
    @usableFromInline let few: [(key: String, value: Value)]
    @usableFromInline let many: [String: Value]

    @inlinable
    public init(_ entries: [String: Value]) {
        few = entries.count <= Self.fewest ? entries.map { ($0.key, $0.value) } : []
        many = entries.count <= Self.fewest ? [:] : entries
    }

    @inlinable
    public subscript(key: String) -> Value? {
        guard many.isEmpty else { return many[key] }
        return few.first { $0.key == key }?.value
    }

    @inlinable
    public func contains(_ key: String) -> Bool {
        self[key] != nil
    }
}
