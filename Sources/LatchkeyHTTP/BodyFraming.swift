/// How a request's body is delimited (RFC 9112 §6.3).
public enum BodyFraming: Sendable, Equatable, Hashable {
    /// Neither `Content-Length` nor `Transfer-Encoding`: a request has no body (§6.3 rule 7).
    case none
    /// `Content-Length: n`, which may be 0 (kept apart from `.none` so a proxy can tell an
    /// explicit empty body from an absent one).
    case length(UInt64)
    /// `Transfer-Encoding: chunked` (§7.1).
    case chunked
}
