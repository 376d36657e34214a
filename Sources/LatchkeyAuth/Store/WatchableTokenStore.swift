/// What a store found changed for one identity, made by another process (`latchkey login`
/// or `logout` next to a running `serve`).
public enum StoreChange: Sendable, Equatable {
    /// The store holds this token now.
    case stored(TokenSet)
    /// The identity's entry is gone.
    case removed
    /// A person logged the identity out (`latchkey logout`): it waits for a login.
    case loggedOut
    /// The entry changed but cannot be read (another key, a corrupt file moved aside):
    /// why, never a secret. The identity keeps the token it has.
    case unreadable(String)
}

/// A store that other processes write too, and that can say what they changed.
public protocol WatchableTokenStore: TokenStore {
    /// The entries of `identities` that changed since this store last read or wrote them
    /// itself: its own writes are never reported back.
    func changes(among identities: [String]) async -> [String: StoreChange]
}
