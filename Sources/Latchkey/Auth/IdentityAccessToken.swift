#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig
import Logging

/// `latchkey token IDENTITY`: an access token for a script, got the way `serve` gets it
/// (as `gcloud auth print-access-token` prints one). The stored token if it is good for a
/// while yet; otherwise a refresh (or a new grant), saved into the token store before it
/// is handed out, so that a running serve takes up the rotated refresh token instead of
/// spending the old one.
public struct IdentityAccessToken: Sendable {
    private let identity: Identity

    /// Resolves the identity's own secrets only. Its events go to `logger`; the hook and
    /// the metrics are the running serve's.
    public init(
        identity config: IdentityConfig, client: AuthHTTPClient, store: any TokenStore, logger: Logger,
        environment: [String: String] = ProcessInfo.processInfo.environment, sourceName: String = "config"
    ) throws(ConfigErrors) {
        let credentials = try CredentialStore(entries: config.secretEntries, environment: environment, sourceName: sourceName,
                                              logger: Logger(label: "latchkey.credentials"))
        identity = config.makeIdentity(credentials: credentials, client: client, store: store, events: AuthEventLog(logger: logger),
                                       timing: Self.printing(config.timing))
    }

    /// A script uses the token after this process has gone, so it gets one that lasts past
    /// the point where serve would renew it: the refresh margin joins the clock skew, and
    /// there is no background refresh (a refresh cut off by the exit would spend a
    /// refresh token whose successor nobody stores).
    static func printing(_ timing: TokenTiming) -> TokenTiming {
        TokenTiming(clockSkew: timing.clockSkew + timing.refreshAhead, refreshAhead: .zero)
    }

    /// Restores the stored token and answers with it, or with a renewed one: its access
    /// token, and a recipe's captures (`latchkey token --field`).
    public func current() async -> Result<IssuedToken, IdentityUnavailable> {
        await identity.start(eagerly: false)
        return await withCheckedContinuation { continuation in
            identity.demand { continuation.resume(returning: $0) }
        }
    }
}
