import LatchkeyUpstream

/// Token revocation (RFC 7009 §2.1), as a logout does it.
public struct RevocationRequest: Sendable {
    public var endpoint: String
    public var token: String
    /// `refresh_token` or `access_token` (RFC 7009 §2.1); a hint the server may ignore.
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
