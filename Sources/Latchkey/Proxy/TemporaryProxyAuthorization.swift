import LatchkeyHTTP
import LatchkeyServer

enum ProxyAuthorization {
    static func admits(_ fields: HTTPFields, secret: String?) -> Bool { false }
    static let challenge = ErrorDocument(status: 407, error: "proxy_authentication_required", message: "x")
}
