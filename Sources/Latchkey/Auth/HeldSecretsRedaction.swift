import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLogging
import Synchronization

/// What log lines mask: every credential, as the credential store gives them, and the
/// values identities obtained that are as secret (a recipe's secret captures, such as
/// TMDB's `session_id`), from the moment each is held until it is replaced. The merged
/// mask is made again only when a credential or one of those identities' tokens changed:
/// it is asked for at every log line.
final class HeldSecretsRedaction: LogRedactionSource {
    private let credentials: CredentialStore
    private let state = Mutex(State())

    private struct State {
        /// The identities whose tokens hold such values (`IdentityConfig.holdsSecretCaptures`).
        var identities: [Identity] = []
        /// How many registries were followed, the last one `identities`'.
        var followed: UInt64 = 0
        /// The merged mask, with what it was made from; nil until a log line first asks.
        var made: (origin: Origin, mask: SecretMask)?
    }

    /// What a merged mask was made from: the registry followed, the credentials' generation
    /// and each of its identities' token generation. When none moved, the mask stands.
    private struct Origin {
        var followed: UInt64
        var credentials: UInt64
        var tokens: [UInt64]
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
            state.followed += 1
        }
    }

    var redactionMask: SecretMask {
        let snapshot = credentials.snapshot
        let (identities, followed, made) = state.withLock { ($0.identities, $0.followed, $0.made) }
        // No identity holds such values: the credentials' own mask, as it is.
        guard !identities.isEmpty else { return snapshot.redactionMask }
        // The identities' locks are taken apart from this one, never under it: no order of
        // locks to keep between a log line and an identity.
        // Compared in place: this runs for every log line, and the mask is rarely remade.
        if let made, made.origin.followed == followed, made.origin.credentials == snapshot.generation,
            made.origin.tokens.elementsEqual(identities.lazy.map(\.tokenGeneration)) {
            return made.mask
        }
        let held = identities.map(\.heldSecrets)
        let mask = SecretMask(snapshot.redactionValues + held.flatMap(\.values))
        let origin = Origin(followed: followed, credentials: snapshot.generation, tokens: held.map(\.generation))
        state.withLock { $0.made = (origin, mask) }
        return mask
    }
}
