extension RedisTokenStore {
    /// One MGET of the identities' values, compared with what this store last read or wrote:
    /// what another replica (or `latchkey login`) stored since. The first sight of an
    /// identity only records it. While Redis is away nothing is reported, and the call is
    /// also what retries the connection (the watcher asks about once a second).
    public func changes(among identities: [String]) async -> [String: StoreChange] {
        guard !identities.isEmpty else { return [:] }
        return await onQueue { self.poll(identities) }
    }

    private func poll(_ identities: [String]) -> [String: StoreChange] {
        let command = [Array("MGET".utf8)] + identities.map { Array(tokenKey($0).utf8) }
        guard case .array(let values)? = try? withConnection({ connection throws(TokenStoreError) in try connection.command(command) }),
              values.count == identities.count
        else { return [:] }
        var changes: [String: StoreChange] = [:]
        for (identity, value) in zip(identities, values) {
            let bytes: [UInt8] = if case .string(let bytes) = value { bytes } else { [] }
            let before = link.known[identity]
            link.known[identity] = bytes
            guard let before, before != bytes else { continue }
            guard !bytes.isEmpty else {
                changes[identity] = .removed
                continue
            }
            do {
                let record = try StoreEnvelope.decode(bytes, identity: identity, key: key, entry: entry(identity)).record
                changes[identity] = record.token.map(StoreChange.stored) ?? .removed
            } catch {
                changes[identity] = .unreadable(error.message)
            }
        }
        return changes
    }
}
