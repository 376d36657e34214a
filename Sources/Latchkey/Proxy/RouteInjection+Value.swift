import LatchkeyAuth
import LatchkeyConfig

extension RouteInjection {
    /// What this injection attaches: its credential's value; or of the identity's `token`,
    /// the capture it names (a recipe's `{session_id}`), else the token itself. Nil when
    /// there is none: the admission refuses a missing credential, and `Route.missingCapture`
    /// a missing capture, before a request gets here.
    func value(credentials: CredentialSnapshot, token: IssuedToken?) -> String? {
        switch config.source {
        case .credential(let name): credentials[name]
        case .identity:
            if let capture = config.capture { token?.captures[capture] } else { token?.accessToken }
        }
    }
}
