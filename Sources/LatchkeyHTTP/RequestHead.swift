/// A decoded request line and header section, with what the decoder derived from it.
public struct RequestHead: Sendable, Equatable, Hashable {
    /// The method token, case preserved (RFC 9110 §9.1: methods are case-sensitive).
    public var method: String
    /// The raw request-target (RFC 9112 §3.2): origin-form `/path?query`, absolute-form,
    /// authority-form for CONNECT, or `*`. Only visible ASCII, never decoded.
    public var target: String
    public var version: HTTPVersion
    /// The header section in order of arrival, duplicates kept. A `Content-Length` sent as
    /// several identical values is reduced to one (RFC 9110 §8.6).
    public var fields: HTTPFields
    public var framing: BodyFraming
    /// RFC 9112 §9.3: HTTP/1.1 stays open unless `Connection: close`; HTTP/1.0 only with
    /// `Connection: keep-alive` (and no `close`).
    public var keepAlive: Bool
    /// `Expect: 100-continue` on HTTP/1.1 (RFC 9110 §10.1.1: ignored for HTTP/1.0).
    public var expectsContinue: Bool
    /// An HTTP/1.1 request with `Upgrade` whose `Connection` names it: one that may switch
    /// protocols (`requestedUpgrade` says to what). Found by the decoder while it reads the
    /// fields, so that other requests cost nothing more.
    public var asksUpgrade: Bool

    public init(
        method: String,
        target: String,
        version: HTTPVersion = .http1_1,
        fields: HTTPFields = [],
        framing: BodyFraming = .none,
        keepAlive: Bool = true,
        expectsContinue: Bool = false,
        asksUpgrade: Bool? = nil
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.fields = fields
        self.framing = framing
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
        // A head made by hand: judged from its fields, as the decoder would.
        self.asksUpgrade = asksUpgrade ?? (version == .http1_1 && fields.contains(.upgrade)
            && Self.listContains(fields.values(named: .connection), "upgrade"))
    }
}
