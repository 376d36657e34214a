import LatchkeyHTTP

extension ErrorDocument {
    /// The same error as a short HTML page, for a browser's navigation: what a person sees
    /// in the window instead of JSON. Only `message` and the code are shown, escaped.
    public var pageBody: [UInt8] {
        Array("""
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><title>Latchkey: \(HTMLText.escape(error))</title></head>
            <body><h1>\(status) \(HTMLText.escape(error))</h1><p>\(HTMLText.escape(message))</p></body></html>

            """.utf8)
    }

    public var pageFields: HTTPFields {
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: "text/html; charset=utf-8")
        fields.append(name: "Cache-Control", value: "no-store")
        // The page loads nothing: it says what failed and nothing else.
        fields.append(name: "Content-Security-Policy", value: "default-src 'none'")
        return fields
    }
}
