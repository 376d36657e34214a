extension HTTPFields {
    /// Removes the fields that describe one connection rather than the message
    /// (RFC 9110 §7.6.1): `Connection` and every field it names, plus the well-known
    /// hop-by-hop fields that older peers send without naming them in `Connection`
    /// (`Keep-Alive`, `Proxy-Connection`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`).
    /// A proxy calls this on every message it forwards; leaving any of them in place lets
    /// a client steer the next hop's framing or connection handling.
    public mutating func removeHopByHop() {
        // The names listed in Connection, collected before anything is removed. The usual
        // values ("keep-alive", "close") name nothing beyond the fixed set, so they are
        // checked as bytes and only an unusual name costs a String.
        var named: [String] = []
        var anyToRemove = false
        // By index, reading names in place rather than copying each field.
        for index in storage.indices {
            guard ASCII.equalsCaseInsensitive(storage[index].name, "connection") else {
                if !anyToRemove, HTTPFields.isAlwaysHopByHop(storage[index].name) { anyToRemove = true }
                continue
            }
            anyToRemove = true
            var value = storage[index].value
            value.withUTF8 { buffer in
                let bytes = UnsafeRawBufferPointer(buffer)
                try? ASCII.forEachListElement(bytes, 0..<bytes.count) { range in
                    let element = ASCII.string(bytes, range)
                    if !HTTPFields.isAlwaysHopByHop(element) && !ASCII.equalsCaseInsensitive(element, "close") {
                        named.append(element)
                    }
                }
            }
        }
        // Nothing to remove: leave the storage alone rather than copy it.
        guard anyToRemove else { return }
        storage.removeAll { field in
            if HTTPFields.isAlwaysHopByHop(field.name) { return true }
            return named.contains { ASCII.equalsCaseInsensitive($0, field.name) }
        }
    }

    static func isAlwaysHopByHop(_ name: String) -> Bool {
        // Switch on the length first: most names are rejected without comparing a byte.
        switch name.utf8.count {
        case 2: ASCII.equalsCaseInsensitive(name, "te")
        case 7: ASCII.equalsCaseInsensitive(name, "trailer") || ASCII.equalsCaseInsensitive(name, "upgrade")
        case 10: ASCII.equalsCaseInsensitive(name, "connection") || ASCII.equalsCaseInsensitive(name, "keep-alive")
        case 16: ASCII.equalsCaseInsensitive(name, "proxy-connection")
        case 17: ASCII.equalsCaseInsensitive(name, "transfer-encoding")
        default: false
        }
    }
}
