extension RedisTokenStore {
    /// The identity's record as Redis holds it now (an empty one when there is none).
    /// Runs on the store's queue.
    func currentRecord(_ identity: String) throws(TokenStoreError) -> StoredRecord {
        try withConnection { connection throws(TokenStoreError) in
            let bytes = try get(identity, on: connection) ?? []
            let record = try decode(bytes, identity: identity)
            link.known[identity] = RedisLink.Seen(bytes: bytes, record: record)
            return record
        }
    }

    /// Changes the identity's record with `change` (false: leave it as it is): read,
    /// changed, and written back only if no one else wrote it in between — WATCH, GET,
    /// MULTI, SET or DEL, EXEC; an EXEC that another write aborted starts again from what
    /// that write left (Redis' optimistic locking). A value this store cannot read (another
    /// key, a newer format) is never overwritten; a corrupt one is replaced, with a notice.
    /// An empty record deletes the key.
    func update(_ identity: String, on connection: RedisConnection,
                _ change: (inout StoredRecord) -> Bool) throws(TokenStoreError) {
        let name = Array(tokenKey(identity).utf8)
        while true {
            try expectStatus(try connection.command([Array("WATCH".utf8), name]), "WATCH")
            let bytes = try get(identity, on: connection)
            var record: StoredRecord
            do throws(TokenStoreError) {
                record = try decode(bytes ?? [], identity: identity)
            } catch where error.code == .corrupt {
                notices("\(error.message); replaced")
                record = StoredRecord()
            } catch {
                _ = try connection.command([Array("UNWATCH".utf8)])
                throw error
            }
            guard change(&record) else {
                _ = try connection.command([Array("UNWATCH".utf8)])
                return
            }
            let written = record.isEmpty ? [] : try StoreEnvelope.encode(record, identity: identity, key: key)
            try expectStatus(try connection.command([Array("MULTI".utf8)]), "MULTI")
            let queued = try connection.command(written.isEmpty ? [Array("DEL".utf8), name] : [Array("SET".utf8), name, written])
            try expectStatus(queued, written.isEmpty ? "DEL" : "SET")
            switch try connection.command([Array("EXEC".utf8)]) {
            case .null:
                continue
            case .array(let replies):
                if let failed = replies.first(where: { if case .error = $0 { true } else { false } }) {
                    throw refusal(failed, written.isEmpty ? "DEL" : "SET")
                }
                link.known[identity] = RedisLink.Seen(bytes: written, record: StoreEnvelope.normalized(record))
                return
            case let other:
                throw refusal(other, "EXEC")
            }
        }
    }

    /// The record in a value, an empty one for none ([]).
    func decode(_ bytes: [UInt8], identity: String) throws(TokenStoreError) -> StoredRecord {
        guard !bytes.isEmpty else { return StoredRecord() }
        return try StoreEnvelope.decode(bytes, identity: identity, key: key, entry: entry(identity)).record
    }

    /// A simple-string answer (OK, QUEUED) is what a command of a transaction should get.
    private func expectStatus(_ reply: RedisReply, _ command: String) throws(TokenStoreError) {
        guard case .status = reply else { throw refusal(reply, command) }
    }
}
