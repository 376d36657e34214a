#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Polls the token endpoint with a device code until the user has approved or refused it
/// on another device, as RFC 8628 §3.5 says: `authorization_pending` polls again after the
/// interval, `slow_down` adds 5 seconds to it for good, `access_denied` and
/// `expired_token` end the login, and so does the device code's `expires_in`. The clock
/// and the sleep are injected, so tests run the schedule without waiting.
public struct DeviceGrantPoller: Sendable {
    public typealias Sleep = @Sendable (Duration) async throws -> Void

    public let authorization: DeviceAuthorization
    /// When the device authorization was issued: `expires_in` counts from here.
    public let issuedAt: Date
    private let now: @Sendable () -> Date
    private let sleep: Sleep

    /// RFC 8628 §3.5 `slow_down`: "the interval MUST be increased by 5 seconds for this
    /// and all subsequent requests".
    public static let slowDownStep = Duration.seconds(5)
    /// The longest wait after failures to reach the server, which §3.5 asks clients to
    /// answer by polling less often.
    public static let maxUnreachableInterval = Duration.seconds(60)

    public init(
        authorization: DeviceAuthorization, issuedAt: Date, now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping Sleep = { try await Task.sleep(for: $0) }
    ) {
        self.authorization = authorization
        self.issuedAt = issuedAt
        self.now = now
        self.sleep = sleep
    }

    /// Waits the interval, then asks `redeem` (one token request with the device code),
    /// until it gives tokens or the login fails. Task cancellation ends it as `.cancelled`.
    public func poll(
        _ redeem: @Sendable (_ deviceCode: String) async throws(TokenEndpointError) -> TokenSet
    ) async throws(LoginError) -> TokenSet {
        let expiresAt = issuedAt.addingTimeInterval(authorization.expiresIn.seconds)
        var interval = authorization.interval
        while true {
            // The code will be dead before the next poll could be answered.
            guard now().addingTimeInterval(interval.seconds) < expiresAt else { throw .deviceCodeExpired }
            do {
                try await sleep(interval)
            } catch {
                throw .cancelled
            }
            do {
                return try await redeem(authorization.deviceCode)
            } catch {
                if Task.isCancelled { throw .cancelled }
                if case .oauth(let refusal) = error, refusal.code == .accessDenied {
                    throw .refused(error: refusal.error, description: refusal.errorDescription)
                }
                switch error.oauthCode {
                case .authorizationPending:
                    continue
                case .slowDown:
                    interval += Self.slowDownStep
                case .expiredToken:
                    throw .deviceCodeExpired
                default:
                    guard error.isRetryable else { throw .endpoint(error) }
                    // §3.5: a client that cannot get an answer polls less often from then
                    // on (here: twice the wait, up to a minute).
                    interval = max(interval, min(interval * 2, Self.maxUnreachableInterval))
                }
            }
        }
    }
}
