extension HTTPFields {
    /// Removes the fields that describe one connection rather than the message
    /// (RFC 9110 §7.6.1): `Connection` and every field it names, plus the well-known
    /// hop-by-hop fields that older peers send without naming them in `Connection`
    /// (`Keep-Alive`, `Proxy-Connection`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`).
    /// A proxy calls this on every message it forwards; leaving any of them in place lets
    /// a client steer the next hop's framing or connection handling.
    public mutating func removeHopByHop() {
        guard knownNames & FieldName.alwaysHopByHop != 0 else { return }
        // One walk: whether a field of the fixed set is here, and whether a `Connection`
        // holds more than `keep-alive` or `close` (each alone, as most peers send them), a
        // list that may name other fields.
        var fixedSetFound = false, connectionLists = false
        withLines { lines in
            for index in 0..<entryCount {
                let entry = entry(at: index)
                guard entry.name.isAlwaysHopByHop else { continue }
                fixedSetFound = true
                if entry.name == .connection, !Self.namesNoField(entry, in: lines) { connectionLists = true }
            }
        }
        // Nothing to remove (the usual request): leave the storage alone rather than copy it.
        guard fixedSetFound else { return }
        // The usual response: the fields to go are known by their names' bits alone.
        guard connectionLists, let names = hopByHopNames() else {
            return removeEntries { entry, _ in entry.name.isAlwaysHopByHop }
        }
        removeEntries { entry, lines in names.contains(entry, in: lines) }
    }

    /// The names `removeHopByHop` removes: the fixed set and those `Connection` lists; nil
    /// when no field is one of them.
    public func hopByHopNames() -> NameSet? {
        guard knownNames & FieldName.alwaysHopByHop != 0, containsEntry(where: { $0.name.isAlwaysHopByHop }) else { return nil }
        // The names listed in Connection, collected before anything is removed. The usual
        // values ("keep-alive", "close") name nothing beyond the fixed set.
        var names = NameSet.alwaysHopByHop
        withLines { lines in
            for index in 0..<entryCount {
                let entry = entry(at: index)
                guard entry.name == .connection else { continue }
                if Self.namesNoField(entry, in: lines) { continue }
                ASCII.forEachListElement(lines, entry.valueRange) { element in
                    let known = FieldName.classify(lines, element)
                    if known != .other {
                        names.insert(known: known)
                    } else if !ASCII.equalsCaseInsensitive(lines, element, "close") {
                        names.insert(Name(ASCII.string(lines, element)))
                    }
                }
            }
        }
        return names
    }

    /// A `Connection` line that is `keep-alive` or `close` alone, as most peers send it:
    /// it names no field, and there is no list to walk.
    private static func namesNoField(_ connection: Entry, in lines: UnsafeRawBufferPointer) -> Bool {
        ASCII.equalsCaseInsensitive(lines, connection.valueRange, "keep-alive")
            || ASCII.equalsCaseInsensitive(lines, connection.valueRange, "close")
    }
}
