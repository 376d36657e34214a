import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLoop
import Synchronization

/// Tells identities that their secrets changed (`Identity.credentialsChanged`), so that one
/// whose IdP refused its configuration asks again: the secrets the `CredentialStore`
/// reloads from their files, and the files an identity reads at each token request (keys,
/// subject tokens), which nothing else watches: one stat each per pass.
final class IdentityCredentialWatch: Sendable {
    private struct Watched: Sendable {
        let identity: Identity
        /// `CredentialStore` names.
        let secrets: Set<String>
        let files: [String]
    }

    private let watched: [Watched]
    /// Each file's signature at the last pass (nil: it could not be stat'ed).
    private let signatures: Mutex<[String: FileSignature?]>

    init(configs: [IdentityConfig], identities: [String: Identity]) {
        watched = configs.compactMap { config in
            identities[config.name].map {
                Watched(identity: $0, secrets: Set(config.secretEntries.map(\.name)), files: config.filesReadPerTokenRequest)
            }
        }
        signatures = Mutex(FileSignature.of(watched.flatMap(\.files)))
    }

    /// One pass of the secret-file watcher, after the credential store reloaded `changed`.
    func check(reloaded changed: [String]) {
        let reloaded = Set(changed)
        let moved = signatures.withLock { known -> Set<String> in
            var moved: Set<String> = []
            for (path, before) in known {
                let now = FileSignature(path: path)
                guard now != before else { continue }
                known[path] = now
                moved.insert(path)
            }
            return moved
        }
        for entry in watched where !entry.secrets.isDisjoint(with: reloaded) || entry.files.contains(where: moved.contains) {
            entry.identity.credentialsChanged()
        }
    }
}

extension IdentityConfig {
    /// The files read afresh at each token request: its keys and the token it exchanges.
    var filesReadPerTokenRequest: [String] {
        var files = clientKeyFile.map { [$0] } ?? []
        switch grant {
        case .jwtBearer(let bearer):
            switch bearer.key {
            case .pemFile(let path), .serviceAccountFile(let path): files.append(path)
            }
        case .tokenExchange(let file, _, _): files.append(file)
        case .staticToken, .password, .clientCredentials, .refreshToken, .custom, .authorizationCode, .deviceCode, .recipe: break
        }
        return files
    }
}
