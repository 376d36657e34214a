extension StringProtocol {
    /// Without the spaces and horizontal tabs around it: HTTP's optional whitespace
    /// (RFC 9110 §5.6.3), and what RFC 6265 §5.2 strips around a cookie's name, value and
    /// attributes.
    public func trimmingSpaces() -> SubSequence {
        var text = self[...]
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
