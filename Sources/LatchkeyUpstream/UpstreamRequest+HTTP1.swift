import LatchkeyHTTP

/// The request as Latchkey writes it itself on a raw connection (`HTTP1ExchangeMachine`).
extension UpstreamRequest {
    /// The request head: the request line for `target`, the fields, and the framing of the
    /// body (`Content-Length` for a sized one, `Transfer-Encoding: chunked` for a streamed
    /// one, none without a body, RFC 9112 §6). Nil when the method or target cannot be
    /// written (`RequestHeadEncoder`).
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
