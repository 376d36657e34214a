import LatchkeyAuth
import Logging

/// Auth events as structured log lines: one per change, with the identity and what
/// happened; failures at warning level. Never a token: events carry none.
struct AuthEventLog: AuthEventSink {
    let logger: Logger

    func record(_ event: AuthEvent) {
        var metadata: Logger.Metadata = ["identity": .string(event.identity), "event": .string(event.kind.rawValue)]
        if let detail = event.detail { metadata["detail"] = .string(detail) }
        switch event.kind {
        case .failed, .loginRequired: logger.warning("auth state changed", metadata: metadata)
        case .acquired, .refreshed, .loggedOut: logger.info("auth state changed", metadata: metadata)
        }
    }
}
