extension HTTPFields {
    /// Removes the fields that describe one connection rather than the message
    /// (RFC 9110 §7.6.1): `Connection` and every field it names, plus the well-known
    /// hop-by-hop fields that older peers send without naming them in `Connection`
    /// (`Keep-Alive`, `Proxy-Connection`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`).
    /// A proxy calls this on every message it forwards; leaving any of them in place lets
    /// a client steer the next hop's framing or connection handling.
    public mutating func removeHopByHop() {
        // The names listed in Connection, collected before anything is removed.
        var named: [String] = []
        for field in storage where ASCII.equalsCaseInsensitive(field.name, "connection") {
            named.append(contentsOf: ASCII.listElements(of: field.value))
        }
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
