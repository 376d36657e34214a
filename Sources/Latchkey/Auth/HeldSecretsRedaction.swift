import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLogging
import Synchronization

/// What log lines mask: every credential, as the credential store gives them, and the
/// values identities obtained that are as secret (a recipe's secret captures, such as
/// TMDB's `session_id`), from the moment each is held until it is replaced. The merged
/// list is made again only when a credential or one of those identities' tokens changed:
/// it is asked for at every log line.
final class HeldSecretsRedaction: LogRedactionSource {
    private let credentials: CredentialStore
    private let state = Mutex(State())

    private struct State {
        /// The identities whose tokens hold such values (`IdentityConfig.holdsSecretCaptures`).
        var identities: [Identity] = []
        /// What `values` was made from: the credentials' and each identity's generation.
        var credentialGeneration: UInt64?
        var tokenGenerations: [UInt64] = []
        var values: [String] = []
    }

    init(credentials: CredentialStore) {
        self.credentials = credentials
    }

    /// From now on, the values `registry`'s identities hold are masked too (at start, and
    /// when a reload puts another registry in force).
    func follow(_ registry: IdentityRegistry) {
        let holding = registry.holdingSecretCaptures
        state.withLock { state in
            state.identities = holding
            state.credentialGeneration = nil
        }
    }

    var redactionValues: [String] {
        let snapshot = credentials.snapshot
        return state.withLock { state in
            // No identity holds such values: the credentials' own list, as it is.
            guard !state.identities.isEmpty else { return snapshot.redactionValues }
            let generations = state.identities.map(\.tokenGeneration)
            if snapshot.generation == state.credentialGeneration, generations == state.tokenGenerations { return state.values }
            let held = state.identities.map(\.heldSecrets)
            let values = Set(snapshot.redactionValues + held.flatMap(\.values))
            // Longest first, as `LogRedactionSource` asks.
            state.values = values.sorted { $0.utf8.count > $1.utf8.count }
            state.credentialGeneration = snapshot.generation
            state.tokenGenerations = held.map(\.generation)
            return state.values
        }
    }
}
