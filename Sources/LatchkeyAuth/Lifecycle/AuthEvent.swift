/// A change of an identity's auth state, for logs, metrics and the hook command.
public struct AuthEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case acquired
        case refreshed
        case failed
        case loginRequired = "login_required"
        case loggedOut = "logged_out"
    }

    public var identity: String
    public var kind: Kind
    /// One line saying why (for failures); never a secret.
    public var detail: String?

    public init(identity: String, kind: Kind, detail: String? = nil) {
        self.identity = identity
        self.kind = kind
        self.detail = detail
    }
}

/// Receives auth events. Called off the event loops; must not block for long.
public protocol AuthEventSink: Sendable {
    func record(_ event: AuthEvent)
}
