extension RedisTokenStore {
    /// One MGET of the identities' values, compared with what this store last read or wrote:
    /// what another replica (or `latchkey login` or `logout`) stored since. The first sight
    /// of an identity only records it. While Redis is away nothing is reported, and the
    /// call is also what retries the connection (the watcher asks about once a second).
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
            guard before?.bytes != bytes else { continue }
            do {
                let record = try decode(bytes, identity: identity)
                link.known[identity] = RedisLink.Seen(bytes: bytes, record: record)
                // The token and the logout mark are what other processes change (login,
                // logout, a replica's refresh); the cookies are this process's own, and
                // every sealed write has new bytes.
                guard let before, record.token != before.record.token || record.loggedOut != before.record.loggedOut else { continue }
                changes[identity] = record.token.map(StoreChange.stored) ?? (record.loggedOut ? .loggedOut : .removed)
            } catch {
                // Reported once: these bytes count as seen until the value changes again.
                link.known[identity] = RedisLink.Seen(bytes: bytes, record: before?.record ?? StoredRecord())
                changes[identity] = .unreadable(error.message)
            }
        }
        return changes
    }
}
