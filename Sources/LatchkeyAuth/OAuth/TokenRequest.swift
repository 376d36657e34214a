import LatchkeyUpstream

/// One request to a token endpoint (RFC 6749 §3.2): a grant, the client's credentials and
/// what the token should be good for.
public struct TokenRequest: Sendable {
    public var endpoint: String
    public var grant: TokenGrant
    /// nil for a server that wants no client credentials at all.
    public var clientAuthentication: ClientAuthentication?
    /// Space-separated scopes (RFC 6749 §3.3).
    public var scope: String?
    /// Whether a refresh sends `scope` too. Off by default: without it the server grants
    /// the scope of the original grant (RFC 6749 §6), and some servers refuse a refresh
    /// that names one; a few (Azure AD v2) require it.
    public var sendsScopeOnRefresh: Bool
    /// Auth0's `audience`, also RFC 8693's.
    public var audience: String?
    /// RFC 8707 `resource` indicators, one field each.
    public var resources: [String]
    /// Anything else the server wants, sent after the standard fields.
    public var extraFields: [(String, String)]

    public init(
        endpoint: String,
        grant: TokenGrant,
        clientAuthentication: ClientAuthentication?,
        scope: String? = nil,
        sendsScopeOnRefresh: Bool = false,
        audience: String? = nil,
        resources: [String] = [],
        extraFields: [(String, String)] = []
    ) {
        self.endpoint = endpoint
        self.grant = grant
        self.clientAuthentication = clientAuthentication
        self.scope = scope
        self.sendsScopeOnRefresh = sendsScopeOnRefresh
        self.audience = audience
        self.resources = resources
        self.extraFields = extraFields
    }

    /// The POST to send. Throws only when a `private_key_jwt` assertion cannot be made.
    public func httpRequest(options: UpstreamOptions) throws(TokenEndpointError) -> AuthHTTPRequest {
        var form = grant.formFields
        if let scope, sendsScopeOnRefresh || !isRefresh { form.append(("scope", scope)) }
        if let audience { form.append(("audience", audience)) }
        form += resources.map { ("resource", $0) }
        form += extraFields
        return try OAuthFormPost.request(to: endpoint, form: form, clientAuthentication: clientAuthentication, options: options)
    }

    private var isRefresh: Bool {
        if case .refreshToken = grant { true } else { false }
    }
}
