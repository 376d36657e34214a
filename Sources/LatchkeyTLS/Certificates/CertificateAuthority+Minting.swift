#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import COpenSSL

extension CertificateAuthority {
    /// A server certificate for `names` (host names and IP literals) with a fresh ECDSA
    /// P-256 key, signed by this CA: the names as subject alternative names (addresses as
    /// iPAddress entries), the first as CN, for TLS servers only (RFC 5280 §4.2.1.12
    /// id-kp-serverAuth, §4.2.1.3 digitalSignature: ECDHE key exchange only signs), valid
    /// from an hour ago until `leafLifetime` from now or the CA's own end, whichever comes
    /// first. The chain is the leaf then the CA.
    public func mintLeaf(names: [String], now: Date) throws(TLSError) -> TLSIdentity {
        var alternativeNames: [SubjectAlternativeName] = []
        for name in names {
            let parsed = try SubjectAlternativeName(name)
            if !alternativeNames.contains(parsed) { alternativeNames.append(parsed) }
        }
        guard let first = alternativeNames.first else { throw TLSError(.setup, "cannot mint a certificate for no name") }
        let authorityEnd = certificate.notAfter
        guard authorityEnd > now else {
            throw TLSError(.expired, "the local CA certificate (\(certificate.subject)) expired on \(authorityEnd); renew or replace it")
        }
        let key = try PrivateKey.generateP256()
        // RFC 5280 §4.1.2.6 (ub-common-name): a CN holds at most 64 characters; a longer
        // name is in the alternative names only.
        let commonName = first.text.utf8.count <= 64 ? first.text : nil
        let builder = CertificateBuilder(
            commonName: commonName, organization: nil, publicKey: key,
            notBefore: now.addingTimeInterval(-Self.backdating), notAfter: min(now.addingTimeInterval(Self.leafLifetime), authorityEnd),
            extensions: [
                (NID_basic_constraints, "CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "serverAuth"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ],
            alternativeNames: alternativeNames
        )
        let leaf = try builder.sign(issuer: certificate, issuerKey: self.key)
        return TLSIdentity(chain: [leaf, certificate], key: key)
    }
}
