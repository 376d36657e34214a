import LatchkeyLoop

/// Why an interactive login (`latchkey login`) ended without a token. `message` is one line
/// for a terminal: it never holds a code, a state, a verifier or a token.
public enum LoginError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The loopback port for the redirect could not be opened.
    case cannotListen(port: UInt16, SystemError)
    /// No usable redirect arrived in time.
    case timedOut(Duration)
    /// The authorization server or the user said no (RFC 6749 §4.1.2.1, RFC 8628 §3.5
    /// `access_denied`), with the server's one-line description.
    case refused(error: String, description: String?)
    /// A redirect for this login that carries neither a code nor an error.
    case missingCode
    /// The device code expired before the user approved it (RFC 8628 §3.5).
    case deviceCodeExpired
    /// A step around the token request failed (discovery, a secret without a value, the
    /// one token request of a grant that needs no person): the reason, as the token source
    /// words it.
    case failed(String)
    /// A request to the token or device authorization endpoint failed.
    case endpoint(TokenEndpointError)
    /// Interrupted (Ctrl-C) before it finished.
    case cancelled

    public var message: String {
        switch self {
        case .cannotListen(let port, let error):
            "cannot listen for the redirect on 127.0.0.1:\(port): \(error)"
        case .timedOut(let timeout):
            "no redirect arrived within \(timeout.components.seconds) s; run the login again (--timeout sets how long it waits)"
        case .refused(let error, let description):
            "the authorization server refused the login with \(error)" + (description.map { ": " + $0 } ?? "")
        case .missingCode:
            AuthorizationError.missingCode.message
        case .deviceCodeExpired:
            "the code expired before the login was approved; run the login again"
        case .failed(let reason):
            reason
        case .endpoint(let error):
            error.message
        case .cancelled:
            "the login was cancelled"
        }
    }

    public var description: String { message }
}
