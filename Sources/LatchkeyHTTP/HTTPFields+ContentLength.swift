extension HTTPFields {
    /// The length the Content-Length fields state (RFC 9110 §8.6), judged as the request
    /// decoder judges it: digits only, every value (across lines and `5, 5` lists) equal.
    /// nil when there is none. For messages that arrive other than through the decoder,
    /// such as an upstream's response head.
    public func contentLength() throws(HTTPParseError) -> UInt64? {
        var semantics = HeadSemantics()
        try forEachValue(of: .contentLength) { (value: UnsafeRawBufferPointer) throws(HTTPParseError) in
            try semantics.observeContentLength(value, 0..<value.count)
            return true
        }
        return semantics.contentLength
    }
}

extension HTTPFields {
    /// Makes `Content-Length: length` the only Content-Length line; a section that has just
    /// that line already (the usual upstream response) is left as it is.
    public mutating func setContentLength(_ length: UInt64) {
        let digits = String(length)
        var lines = 0
        var matches = true
        try? forEachValue(of: .contentLength) { value in
            lines += 1
            matches = matches && value.elementsEqual(digits.utf8)
            return matches
        }
        if lines == 1 && matches { return }
        set(name: .contentLength, value: digits)
    }
}
