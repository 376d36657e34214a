extension HTTPFields {
    /// The length the Content-Length fields state (RFC 9110 §8.6), judged as the request
    /// decoder judges it: digits only, every value (across lines and `5, 5` lists) equal.
    /// nil when there is none. For messages that arrive other than through the decoder,
    /// such as an upstream's response head.
    public func contentLength() throws(HTTPParseError) -> UInt64? {
        var semantics = HeadSemantics()
        var next = 0
        while let index = firstIndex(named: "content-length", from: next) {
            next = index + 1
            var value = storage[index].value
            // withUTF8 only rethrows untyped errors: carry the typed one out by hand.
            var failure: HTTPParseError?
            value.withUTF8 { buffer in
                let bytes = UnsafeRawBufferPointer(buffer)
                do throws(HTTPParseError) {
                    try semantics.observeContentLength(bytes, 0..<bytes.count)
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        }
        return semantics.contentLength
    }
}
