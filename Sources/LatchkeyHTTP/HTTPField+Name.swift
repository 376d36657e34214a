extension HTTPField {
    /// Whether this field is `name`, compared ASCII case-insensitively (RFC 9110 §5.1)
    /// byte by byte, for callers outside the codec that walk the fields themselves.
    public func hasName(_ name: String) -> Bool {
        ASCII.equalsCaseInsensitive(self.name, name)
    }
}
