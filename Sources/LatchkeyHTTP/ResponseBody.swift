/// Whether a response to `requestMethod` with `status` has content (RFC 9110 §6.4.1,
/// RFC 9112 §6.3 rules 1–2): not for HEAD, 1xx, 204 and 304, and not for a 2xx answer to
/// CONNECT (the connection becomes a tunnel). The method is compared case-sensitively
/// (RFC 9110 §9.1).
public func responseCarriesBody(requestMethod: String, status: Int) -> Bool {
    if requestMethod.hasBytes("HEAD") { return false }
    if (100...199).contains(status) || status == 204 || status == 304 { return false }
    if requestMethod.hasBytes("CONNECT"), (200...299).contains(status) { return false }
    return true
}

/// Whether a response to `requestMethod` with `status` must not carry `Content-Length`
/// (RFC 9110 §8.6): 1xx and 204, and a 2xx answer to CONNECT. A 304 and an answer to HEAD
/// may carry the length the content would have had, and keep it.
public func responseForbidsContentLength(requestMethod: String, status: Int) -> Bool {
    if (100...199).contains(status) || status == 204 { return true }
    return requestMethod.hasBytes("CONNECT") && (200...299).contains(status)
}
