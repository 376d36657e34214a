#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import COpenSSL

/// A certificate authority that mints leaves for local-CA listeners: Latchkey's own
/// (`make`) or the user's (loaded from `ca.cert_file` / `ca.key_file`). Immutable.
public struct CertificateAuthority: Sendable {
    public let certificate: Certificate
    public let key: PrivateKey

    /// The organization (O) of every CA Latchkey makes.
    public static let organization = "Latchkey"
    /// A minted leaf's longest life; it is re-minted well before (`LeafCache`).
    public static let leafLifetime: TimeInterval = 7 * 86_400
    /// How far back a validity period starts, so that a client whose clock is a little
    /// behind does not see a certificate that is not valid yet.
    public static let backdating: TimeInterval = 3_600

    /// `key` must belong to `certificate` (`TLSIdentity.load` checks files so).
    public init(certificate: Certificate, key: PrivateKey) {
        self.certificate = certificate
        self.key = key
    }

    /// A new self-signed CA with a fresh ECDSA P-256 key: subject `CN=<commonName>,
    /// O=Latchkey`, valid from an hour ago for `lifetime`. It may sign leaves only (RFC 5280
    /// §4.2.1.9 pathLenConstraint 0) and nothing but certificates and CRLs (§4.2.1.3).
    public static func make(commonName: String, lifetime: Duration, now: Date) throws(TLSError) -> CertificateAuthority {
        let key = try PrivateKey.generateP256()
        let builder = CertificateBuilder(
            commonName: commonName, organization: organization, publicKey: key,
            notBefore: now.addingTimeInterval(-backdating), notAfter: now.addingTimeInterval(TimeInterval(lifetime.components.seconds)),
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
            ]
        )
        return CertificateAuthority(certificate: try builder.sign(issuer: nil, issuerKey: key), key: key)
    }
}
