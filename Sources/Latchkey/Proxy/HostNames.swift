/// A listener's accepted Host values, looked up on every request. Most listeners have a
/// handful (the loopback names, each with and without the port): compared in turn, where
/// comparing short strings costs less than hashing the Host. A long list is hashed.
struct HostNames: Sendable {
    private static let fewest = 8
    private let few: [String]
    private let many: Set<String>

    init(_ names: Set<String>) {
        few = names.count <= Self.fewest ? Array(names) : []
        many = names.count <= Self.fewest ? [] : names
    }

    func contains(_ host: String) -> Bool {
        many.isEmpty ? few.contains(host) : many.contains(host)
    }
}
