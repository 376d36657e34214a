#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyConfig
import LatchkeyTLS

/// The certificate authority that mints the certificates of `local_ca` listeners: the
/// user's own when the configuration has `ca:` (used as it is: never renewed or written),
/// else the one Latchkey keeps in the store directory (`LocalCAStore`).
public struct LocalCA: Sendable {
    public let authority: CertificateAuthority
    /// The certificate clients must trust: `ca.pem`, or `ca.cert_file`.
    public let certificatePath: String
    /// `ca.key`, or `ca.key_file`: with `certificatePath`, the files to watch.
    public let keyPath: String
    /// Latchkey's own CA's directory; nil for the user's CA.
    public let store: LocalCAStore?
    /// What opening did; always `.loaded` for the user's CA.
    public let outcome: LocalCAStore.Outcome

    /// The CA `config` names, or Latchkey's own, made on first use and renewed with a new
    /// key when less than 30 days remain (call it again from a daily check: a changed
    /// `authority.certificate` means the leaves must be minted again). Blocks on file I/O.
    public static func open(config: Config, environment: [String: String], now: Date) throws(LocalCAError) -> LocalCA {
        if let settings = config.ca {
            return LocalCA(authority: try userAuthority(settings, now: now), certificatePath: settings.certFile,
                           keyPath: settings.keyFile, store: nil, outcome: .loaded)
        }
        let store = try store(config: config, environment: environment)
        let (authority, outcome) = try store.loadOrMake(now: now)
        return LocalCA(authority: authority, certificatePath: store.certificatePath, keyPath: store.keyPath, store: store, outcome: outcome)
    }

    /// Latchkey's own CA's directory for `config`'s store, sealing with its store key.
    public static func store(config: Config, environment: [String: String]) throws(LocalCAError) -> LocalCAStore {
        let directory: String, key: StoreKey?
        do throws(TokenStoreError) {
            directory = try config.store.resolvedDirectory(environment: environment)
            key = try StoreKey.configured(keyFile: config.store.keyFile, environment: environment)
        } catch {
            throw LocalCAError(error)
        }
        return try LocalCAStore(storeDirectory: directory, storeKey: key)
    }

    /// `ca.cert_file` and `ca.key_file` checked as a listener's files are, and the
    /// certificate a CA's.
    public static func userAuthority(_ settings: CertificateAuthoritySettings, now: Date) throws(LocalCAError) -> CertificateAuthority {
        let identity: TLSIdentity
        do {
            identity = try TLSIdentity.load(certFile: settings.certFile, keyFile: settings.keyFile, now: now)
        } catch {
            throw LocalCAError(error)
        }
        guard identity.leaf.isCertificateAuthority else {
            throw LocalCAError("certificate file \(settings.certFile) (\(identity.leaf.subject)) is not a CA certificate "
                + "(it needs basicConstraints CA:TRUE to sign the listeners' certificates)")
        }
        return CertificateAuthority(certificate: identity.leaf, key: identity.key)
    }
}
