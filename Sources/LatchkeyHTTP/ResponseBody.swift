/// Whether a response to `requestMethod` with `status` has content (RFC 9110 §6.4.1,
/// RFC 9112 §6.3 rules 1–2): not for HEAD, 1xx, 204 and 304, and not for a 2xx answer to
/// CONNECT (the connection becomes a tunnel). The method is compared case-sensitively
/// (RFC 9110 §9.1).
public func responseCarriesBody(requestMethod: String, status: Int) -> Bool {
    if requestMethod == "HEAD" { return false }
    if (100...199).contains(status) || status == 204 || status == 304 { return false }
    if requestMethod == "CONNECT", (200...299).contains(status) { return false }
    return true
}
