import LatchkeyHTTP

/// Every response Latchkey makes itself (as opposed to relaying the upstream's) is this
/// JSON shape, built here and nowhere else: `{"error": "...", "message": "...", "route": "..."}`,
/// with `"host"` when a forward proxy refuses a destination.
/// `error` is a stable machine-readable code; `message` is for people and never carries a
/// secret, a header value or a request byte. An `Error`: a check that refuses throws the
/// answer it gives.
public struct ErrorDocument: Error, Sendable, Equatable {
    public var status: Int
    public var error: String
    public var message: String
    public var route: String?
    /// The destination a forward proxy refused or could not reach.
    public var host: String?

    public init(status: Int, error: String, message: String, route: String? = nil, host: String? = nil) {
        self.status = status
        self.error = error
        self.message = message
        self.route = route
        self.host = host
    }

    public var body: [UInt8] {
        var out = Array("{\"error\":".utf8)
        JSONText.appendQuoted(error, to: &out)
        out.append(contentsOf: ",\"message\":".utf8)
        JSONText.appendQuoted(message, to: &out)
        if let route {
            out.append(contentsOf: ",\"route\":".utf8)
            JSONText.appendQuoted(route, to: &out)
        }
        if let host {
            out.append(contentsOf: ",\"host\":".utf8)
            JSONText.appendQuoted(host, to: &out)
        }
        out.append(contentsOf: "}\n".utf8)
        return out
    }

    public var fields: HTTPFields {
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: "application/json")
        fields.append(name: "Cache-Control", value: "no-store")
        return fields
    }

    /// The parse error's own status and safe description.
    public init(_ parseError: HTTPParseError) {
        self.init(status: parseError.status, error: Self.code(forStatus: parseError.status), message: parseError.description)
    }

    /// Stable codes for the statuses the server emits on its own.
    public static func code(forStatus status: Int) -> String {
        switch status {
        case 400: "bad_request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "no_route"
        case 408: "request_timeout"
        case 413: "payload_too_large"
        case 414: "uri_too_long"
        case 421: "misdirected_request"
        case 431: "headers_too_large"
        case 501: "not_implemented"
        case 502: "bad_gateway"
        case 503: "unavailable"
        case 504: "gateway_timeout"
        case 505: "http_version_not_supported"
        default: "error"
        }
    }
}
