import LatchkeyHTTP

/// The request as Latchkey writes it itself on a raw connection (`HTTP1ExchangeMachine`).
extension UpstreamRequest {
    /// `scheme://authority` of the URL, what a connection to the upstream is made for, and
    /// the request target in origin form (RFC 9112 §3.2.1: the path and query, the path `/`
    /// when it is empty, RFC 3986 §6.2.3); nil for a URL that is not absolute.
    static func originAndTarget(of url: String) -> (origin: Substring, target: String)? {
        // Over the UTF-8 bytes: Character-wise search cost more than the rest of the head.
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else { return nil }
        let authorityStart = bytes.index(colon, offsetBy: 3)
        let targetStart = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.endIndex
        guard targetStart > authorityStart else { return nil }
        let target = url[targetStart...]
        return (url[..<targetStart], target.utf8.first == UInt8(ascii: "/") ? String(target) : "/" + target)
    }

    /// The request head for `target`: the request line, the fields,
    /// and the framing of the body (`Content-Length` for a sized one, `Transfer-Encoding:
    /// chunked` for a streamed one, none without a body, RFC 9112 §6). Nil when the method
    /// or target cannot be written (`RequestHeadEncoder`).
    func encodedHead() -> [UInt8]? {
        var fields = fields
        switch body {
        case .none: break
        case .length(let length): fields.append(name: .contentLength, value: String(length))
        case .streaming: fields.append(name: .transferEncoding, value: "chunked")
        }
        var head: [UInt8] = []
        guard RequestHeadEncoder.encode(method: method, target: target, fields: fields, into: &head) else { return nil }
        return head
    }
}
