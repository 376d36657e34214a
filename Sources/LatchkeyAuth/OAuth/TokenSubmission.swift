import LatchkeyUpstream

/// A token sent to the revocation endpoint (RFC 7009 §2.1), as a logout does, or to the
/// introspection endpoint (RFC 7662 §2.1), as a start-up check does: the two requests are
/// the same form, `token` with an optional `token_type_hint`, and client authentication.
public struct TokenSubmission: Sendable {
    public var endpoint: String
    public var token: String
    /// `refresh_token` or `access_token`; a hint the server may ignore.
    public var tokenTypeHint: String?
    public var clientAuthentication: ClientAuthentication?

    public init(endpoint: String, token: String, tokenTypeHint: String? = nil, clientAuthentication: ClientAuthentication?) {
        self.endpoint = endpoint
        self.token = token
        self.tokenTypeHint = tokenTypeHint
        self.clientAuthentication = clientAuthentication
    }

    public func httpRequest(options: UpstreamOptions) throws(TokenEndpointError) -> AuthHTTPRequest {
        var form = [("token", token)]
        if let tokenTypeHint { form.append(("token_type_hint", tokenTypeHint)) }
        return try OAuthFormPost.request(to: endpoint, form: form, clientAuthentication: clientAuthentication, options: options)
    }
}
