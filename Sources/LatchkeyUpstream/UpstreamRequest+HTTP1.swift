import LatchkeyHTTP

/// The request as Latchkey writes it itself on a raw connection (`HTTP1ExchangeMachine`).
extension UpstreamRequest {
    /// The request head: the request line for `target`, the fields, and the framing of the
    /// body (`Content-Length` for a sized one, `Transfer-Encoding: chunked` for a streamed
    /// one, none without a body, RFC 9112 §6); a written head as it was written. Nil when
    /// the method or target cannot be written (`RequestHeadEncoder`).
    func encodedHead() -> [UInt8]? {
        switch head {
        case .written(let head):
            return head.bytes
        case .fields(var fields):
            switch body {
            case .none: break
            case .length(let length): fields.append(name: .contentLength, value: String(length))
            case .streaming: fields.append(name: .transferEncoding, value: "chunked")
            }
            var bytes: [UInt8] = []
            guard RequestHeadEncoder.encode(method: method, target: target, fields: fields, into: &bytes) else { return nil }
            return bytes
        }
    }

    /// The request says `Connection: close` (RFC 9112 §9.6).
    var asksToClose: Bool {
        switch head {
        case .fields(let fields): fields.connectionLists("close")
        case .written(let head): head.asksToClose
        }
    }
}
