extension HTTPFields {
    /// Whether a `Connection` line lists `option` (RFC 9110 §7.6.1), ASCII
    /// case-insensitively: `close` says the connection ends after this message (RFC 9112
    /// §9.6), on a request or a response. `option` is written in lowercase. Read as bytes,
    /// with no string made.
    public func connectionLists(_ option: StaticString) -> Bool {
        var listed = false
        forEachValue(of: .connection) { value in
            ASCII.forEachListElement(value, 0..<value.count) { element in
                if ASCII.equalsCaseInsensitive(value, element, option) { listed = true }
            }
            return !listed
        }
        return listed
    }
}
