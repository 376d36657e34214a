#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyServer

/// The proxy's answer when an identity has no token to give: the error and, for a failing
/// IdP, when to try again.
struct IdentityRefusal: Sendable {
    let document: ErrorDocument
    let fields: HTTPFields

    init(_ unavailable: IdentityUnavailable, identity: String, route: String) {
        var fields = HTTPFields()
        switch unavailable {
        case .loginRequired(let reason):
            document = ErrorDocument(status: 401, error: "login_required",
                                     message: "identity \(identity) needs a login (\(reason)): run `latchkey login \(identity)`",
                                     route: route)
        case .failing(let reason, let retryAt):
            let seconds = max(1, Int(retryAt.timeIntervalSinceNow.rounded(.up)))
            fields.append(name: "Retry-After", value: String(seconds))
            document = ErrorDocument(status: 503, error: "identity_unavailable",
                                     message: "no token for identity \(identity): \(reason); next attempt in \(seconds) s",
                                     route: route)
        }
        self.fields = fields
    }
}
