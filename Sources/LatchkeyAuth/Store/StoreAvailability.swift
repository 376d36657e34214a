/// Whether a store's server can be reached, for readiness and for the operator.
public enum StoreAvailability: Sendable, Equatable {
    case available
    /// Why not, never a secret: "cannot connect to redis://10.0.0.5:6379/0: Connection refused".
    case unavailable(reason: String)
}

/// A store that depends on a server (Redis), and says whether it can reach it. Meanwhile
/// the identities serve the tokens they hold, and the store keeps what it could not write.
public protocol AvailabilityReportingStore: TokenStore {
    var availability: StoreAvailability { get }
    /// Calls `observer` with the availability now, then on every change, on whatever thread
    /// noticed it: for the log line and the metric.
    func observeAvailability(_ observer: @escaping @Sendable (StoreAvailability) -> Void)
}
