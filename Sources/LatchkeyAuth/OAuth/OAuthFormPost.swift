import LatchkeyHTTP
import LatchkeyUpstream

/// The request every form-based OAuth endpoint takes (token, device authorization,
/// revocation, introspection): a urlencoded POST asking for JSON, with the client's
/// credentials added (RFC 6749 §3.2, §2.3).
enum OAuthFormPost {
    static let contentType = "application/x-www-form-urlencoded"

    static func request(
        to endpoint: String,
        form: [(String, String)],
        clientAuthentication: ClientAuthentication?,
        options: UpstreamOptions
    ) throws(TokenEndpointError) -> AuthHTTPRequest {
        var form = form
        var fields: HTTPFields = ["Content-Type": contentType, "Accept": "application/json"]
        try clientAuthentication?.apply(to: &form, fields: &fields)
        return AuthHTTPRequest(
            method: "POST", url: endpoint, fields: fields, body: Array(FormEncoding.encode(form).utf8), options: options
        )
    }
}
