import LatchkeyHTTP
import LatchkeyUpstream

/// One request of the control plane (token, discovery, userinfo, revocation, handoff
/// endpoints). The whole body is given up front and the whole answer comes back at once:
/// these exchanges are small, and a bounded buffer is simpler than a stream here.
public struct AuthHTTPRequest: Sendable {
    public var method: String
    /// Absolute http(s) URL. Never logged: a query may carry a secret.
    public var url: String
    /// Sent as given; curl adds `Host` and, for a body, `Content-Length`.
    public var fields: HTTPFields
    public var body: [UInt8]
    /// The same TLS, mTLS, proxy and timeout settings as upstream traffic.
    public var options: UpstreamOptions
    /// Cookies to send and to keep (a handoff endpoint's session for `jar: proxy`).
    public var cookieJar: CookieJar?
    /// A response body larger than this fails the request instead of being buffered.
    public var maxResponseBytes: Int
    /// From hand-over to the loop to the last response byte, whatever the server does.
    public var timeout: Duration

    public static let defaultMaxResponseBytes = 1 << 20
    public static let defaultTimeout = Duration.seconds(30)

    public init(
        method: String,
        url: String,
        fields: HTTPFields = [:],
        body: [UInt8] = [],
        options: UpstreamOptions = UpstreamOptions(),
        cookieJar: CookieJar? = nil,
        maxResponseBytes: Int = AuthHTTPRequest.defaultMaxResponseBytes,
        timeout: Duration = AuthHTTPRequest.defaultTimeout
    ) {
        self.method = method
        self.url = url
        self.fields = fields
        self.body = body
        self.options = options
        self.cookieJar = cookieJar
        self.maxResponseBytes = maxResponseBytes
        self.timeout = timeout
    }

    /// How the body is framed for curl. A method whose body has a meaning says
    /// `Content-Length: 0` for an empty one (RFC 9110 §8.6); the others send no framing.
    var upstreamBody: UpstreamBody {
        if !body.isEmpty { return .length(UInt64(body.count)) }
        return ["POST", "PUT", "PATCH"].contains(method) ? .length(0) : .none
    }
}

/// A complete answer: any status, the body read whole (at most `maxResponseBytes`).
public struct AuthHTTPResponse: Sendable, Equatable {
    public var status: Int
    public var fields: HTTPFields
    public var body: [UInt8]

    public init(status: Int, fields: HTTPFields = [:], body: [UInt8] = []) {
        self.status = status
        self.fields = fields
        self.body = body
    }

    /// The media type of `Content-Type`, lowercased, without parameters (`application/json`).
    public var mediaType: String? {
        guard let value = fields["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return String(type.filter { $0 != " " && $0 != "\t" }).lowercased()
    }

    public var isSuccess: Bool { (200..<300).contains(status) }
}
