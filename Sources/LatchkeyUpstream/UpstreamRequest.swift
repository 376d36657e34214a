import LatchkeyHTTP

/// What to send upstream. The caller has already removed hop-by-hop and framing headers
/// (`Connection`, `Transfer-Encoding`, `Content-Length`, …); `fields` includes `Host`.
/// Made once and only read: every transfer takes it `borrowing`, so it is never copied (a
/// copy would retain each of its strings and arrays).
public struct UpstreamRequest: Sendable {
    public let method: String
    /// `scheme://authority`: what a connection is made for.
    public let origin: String
    /// The request target in origin form (RFC 9112 §3.2.1): the path, `/` when it is
    /// empty, and the query. Never logged here: it may carry an api_key.
    public let target: String
    /// The fields, or the whole head when the caller wrote it (`RequestHeadWriter`).
    let head: Head
    public let body: UpstreamBody
    public let options: UpstreamOptions
    /// The jar whose cookies go with the request and which keeps the response's Set-Cookie;
    /// nil: the request's own Cookie field only, and nothing kept.
    public let cookieJar: CookieJar?
    /// The pool's key for the URL's origin and `options`, when the caller keeps one made
    /// (a route's); else it is made per request.
    public let connectionKey: ConnectionKey?

    enum Head: Sendable {
        case fields(HTTPFields)
        case written(WrittenRequestHead)
    }

    /// A request made from its URL's parts: a route's, whose origin is fixed and whose
    /// target is made per request, so that no URL is composed to be taken apart again.
    public init(
        method: String,
        origin: String,
        target: String,
        fields: HTTPFields,
        body: UpstreamBody = .none,
        options: UpstreamOptions = UpstreamOptions(),
        cookieJar: CookieJar? = nil,
        connectionKey: ConnectionKey? = nil
    ) {
        self.init(method: method, origin: origin, target: target, stored: .fields(fields), body: body, options: options,
                  cookieJar: cookieJar, connectionKey: connectionKey)
    }

    /// A request whose head the caller wrote (`RequestHeadWriter.write`, with this method
    /// and target): Latchkey's own HTTP/1.1 sends it as it is; libcurl is given its fields.
    public init(
        method: String,
        origin: String,
        target: String,
        head: WrittenRequestHead,
        options: UpstreamOptions = UpstreamOptions(),
        cookieJar: CookieJar? = nil,
        connectionKey: ConnectionKey? = nil
    ) {
        let body: UpstreamBody = switch head.framing {
        case .none: .none
        case .length(let length): .length(length)
        case .chunked: .streaming
        }
        self.init(method: method, origin: origin, target: target, stored: .written(head), body: body, options: options,
                  cookieJar: cookieJar, connectionKey: connectionKey)
    }

    private init(method: String, origin: String, target: String, stored head: Head, body: UpstreamBody, options: UpstreamOptions,
                 cookieJar: CookieJar?, connectionKey: ConnectionKey?) {
        self.method = method
        self.origin = origin
        self.target = target
        self.head = head
        self.body = body
        self.options = options
        self.cookieJar = cookieJar
        self.connectionKey = connectionKey
    }

    /// The fields, without the framing (`body` says it); read back from a written head.
    public var fields: HTTPFields {
        switch head {
        case .fields(let fields): fields
        case .written(let head): head.fields
        }
    }

    /// A request to an absolute http(s) URL, taken apart here (`originAndTarget`). A URL
    /// that is not absolute stays whole as the origin, with no target: libcurl is handed it
    /// as it is, and Latchkey's own HTTP/1.1 refuses it.
    public init(
        method: String,
        url: String,
        fields: HTTPFields,
        body: UpstreamBody = .none,
        options: UpstreamOptions = UpstreamOptions(),
        cookieJar: CookieJar? = nil,
        connectionKey: ConnectionKey? = nil
    ) {
        let parts = Self.originAndTarget(of: url)
        self.init(method: method, origin: parts.map { String($0.origin) } ?? url, target: parts?.target ?? "", fields: fields,
                  body: body, options: options, cookieJar: cookieJar, connectionKey: connectionKey)
    }

    /// The absolute URL, for libcurl.
    public var url: String { origin + target }

    /// `scheme://authority` of the URL, what a connection to the upstream is made for, and
    /// the request target in origin form (RFC 9112 §3.2.1: the path and query, the path `/`
    /// when it is empty, RFC 3986 §6.2.3); nil for a URL that is not absolute.
    static func originAndTarget(of url: String) -> (origin: Substring, target: String)? {
        // Over the UTF-8 bytes: Character-wise search cost more than the rest of the head.
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else { return nil }
        let authorityStart = bytes.index(colon, offsetBy: 3)
        let targetStart = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.endIndex
        guard targetStart > authorityStart else { return nil }
        let target = url[targetStart...]
        return (url[..<targetStart], target.utf8.first == UInt8(ascii: "/") ? String(target) : "/" + target)
    }

    /// With a jar, the request's own cookies go to curl as CURLOPT_COOKIE, which curl sends
    /// in one Cookie field with the jar's (RFC 6265 §5.4: one field); a Cookie field of its
    /// own would make curl send two.
    var cookiesForJar: (fields: HTTPFields, cookie: String?) {
        var fields = fields
        let own = fields.values(named: .cookie)
        guard !own.isEmpty else { return (fields, nil) }
        fields.removeAll(named: .cookie)
        return (fields, own.joined(separator: "; "))
    }
}

/// How the request body reaches the upstream.
public enum UpstreamBody: Sendable, Equatable {
    /// No body at all: no `Content-Length`, no `Transfer-Encoding`. A client request that
    /// said `Content-Length: 0` maps to `.length(0)`, which forwards that header.
    case none
    /// Exactly this many bytes, sent with `Content-Length`. The transfer never hands curl
    /// more than this many bytes.
    case length(UInt64)
    /// Unknown length, streamed with `Transfer-Encoding: chunked` over HTTP/1.1 (plain DATA
    /// frames over HTTP/2).
    case streaming
}
