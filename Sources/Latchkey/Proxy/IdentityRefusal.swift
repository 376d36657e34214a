#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyServer

/// The proxy's answer when an identity has no token to give: the error and, for a failing
/// IdP, when to try again; for a misconfigured identity, the key to fix.
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
        case .misconfigured(let problem):
            // No Retry-After: nothing is tried again until the configuration changes.
            document = ErrorDocument(status: 503, error: "identity_misconfigured",
                                     message: "identity \(identity) is misconfigured: \(problem) "
                                         + "(no token is requested until its secrets or configuration change)",
                                     route: route)
        }
        self.fields = fields
    }

    /// The identity's token lacks a capture the route injects. Like a credential without a
    /// value (`credential_unavailable`): the request is never sent without it.
    init(missingCapture capture: String, identity: String, route: String) {
        document = ErrorDocument(status: 503, error: "credential_unavailable",
                                 message: "identity \(identity) holds no capture \(capture), which this route injects; "
                                     + "if its recipe captures \(capture), run `latchkey login \(identity)` to make its result again",
                                 route: route)
        fields = HTTPFields()
    }
}
