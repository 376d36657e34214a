import CoreMetrics
import LatchkeyAuth

/// `latchkey_token_store_available`: 1 while the token store's server can be reached, 0
/// while it cannot (README, "Metrics"). Only for a store that can be away (Redis).
enum StoreMetrics {
    static func observe(_ store: any TokenStore, factory: any MetricsFactory) {
        guard let store = store as? any AvailabilityReportingStore else { return }
        let available = Meter(label: "latchkey_token_store_available", dimensions: [], factory: factory)
        store.observeAvailability { available.set($0 == .available ? 1 : 0) }
    }
}
