extension HTTPFields {
    /// Whether a `Connection` line lists `option` (RFC 9110 §7.6.1), ASCII
    /// case-insensitively: `close` says the connection ends after this message (RFC 9112
    /// §9.6), on a request or a response. `option` is written in lowercase. Read as bytes,
    /// with no string made.
    public func connectionLists(_ option: StaticString) -> Bool {
        var index = 0
        while let found = firstIndex(named: "Connection", from: index) {
            var value = storage[found].value
            var listed = false
            value.withUTF8 { buffer in
                let bytes = UnsafeRawBufferPointer(buffer)
                try? ASCII.forEachListElement(bytes, 0..<bytes.count) { element in
                    if ASCII.equalsCaseInsensitive(bytes, element, option) { listed = true }
                }
            }
            if listed { return true }
            index = found + 1
        }
        return false
    }
}
