import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes and signs one X.509 v3 certificate (RFC 5280): what the local CA's own
/// certificate and the leaves it mints have in common. Used while the certificate has not
/// escaped yet, so that the `Certificate` stays immutable for everyone else.
struct CertificateBuilder {
    /// The subject's CN and O, each only when given.
    var commonName: String?
    var organization: String?
    var publicKey: PrivateKey
    var notBefore: Date
    var notAfter: Date
    /// `(NID, value)` in OpenSSL's configuration syntax ("critical,CA:TRUE,pathlen:0").
    var extensions: [(nid: Int32, value: String)]
    var alternativeNames: [SubjectAlternativeName] = []

    /// Signs with `issuerKey` (ECDSA with SHA-256); `issuer` nil makes it self-signed.
    func sign(issuer: Certificate?, issuerKey: PrivateKey) throws(TLSError) -> Certificate {
        OpenSSLErrors.clear()
        defer { OpenSSLErrors.clear() }
        guard let x509 = X509_new() else { throw failure("X509_new") }
        let certificate = Certificate(taking: x509)
        // X509_VERSION_3 is 2: the version field counts from zero (RFC 5280 §4.1.2.1).
        guard X509_set_version(x509, 2) == 1 else { throw failure("X509_set_version") }
        try setSerialNumber(x509)
        guard ASN1_TIME_set(X509_getm_notBefore(x509), Self.seconds(notBefore)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(x509), Self.seconds(notAfter)) != nil
        else { throw failure("ASN1_TIME_set") }
        try setSubject(x509)
        let issuerName = issuer.map { X509_get_subject_name($0.x509) } ?? X509_get_subject_name(x509)
        guard X509_set_issuer_name(x509, issuerName) == 1 else { throw failure("X509_set_issuer_name") }
        guard X509_set_pubkey(x509, publicKey.pkey) == 1 else { throw failure("X509_set_pubkey") }
        try addExtensions(x509, issuer: issuer?.x509 ?? x509)
        guard X509_sign(x509, issuerKey.pkey, EVP_sha256()) > 0 else { throw failure("X509_sign") }
        return certificate
    }

    /// RFC 5280 §4.1.2.2: positive, at most 20 bytes, unique per CA: 128 random bits
    /// (the top one cleared so that the DER integer stays positive and 16 bytes long).
    private func setSerialNumber(_ x509: OpaquePointer) throws(TLSError) {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else { throw failure("RAND_bytes") }
        bytes[0] &= 0x7F
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else { throw failure("BN_bin2bn") }
        defer { BN_free(number) }
        guard let serial = BN_to_ASN1_INTEGER(number, nil) else { throw failure("BN_to_ASN1_INTEGER") }
        defer { ASN1_INTEGER_free(serial) }
        guard X509_set_serialNumber(x509, serial) == 1 else { throw failure("X509_set_serialNumber") }
    }

    private func setSubject(_ x509: OpaquePointer) throws(TLSError) {
        guard let name = X509_get_subject_name(x509) else { throw failure("X509_get_subject_name") }
        // Most significant first in the DER (O, then CN), so that RFC 2253's reversed text
        // reads "CN=…,O=…".
        for (field, value) in [("O", organization), ("CN", commonName)] {
            guard let value else { continue }
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1 else {
                throw failure("X509_NAME_add_entry_by_txt(\(field))")
            }
        }
    }

    private func addExtensions(_ x509: OpaquePointer, issuer: OpaquePointer) throws(TLSError) {
        var context = X509V3_CTX()
        // No configuration database: the values name no sections.
        X509V3_set_ctx(&context, issuer, x509, nil, nil, 0)
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw failure("X509V3_EXT_conf_nid(\(value))") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(x509, ext, -1) == 1 else { throw failure("X509_add_ext") }
        }
        guard !alternativeNames.isEmpty else { return }
        // Built entry by entry rather than through a "DNS:a,IP:b" text, which a name with a
        // comma could extend.
        guard let names = GENERAL_NAMES_new() else { throw failure("GENERAL_NAMES_new") }
        defer { GENERAL_NAMES_free(names) }
        for name in alternativeNames {
            let entry = try name.generalName()
            guard OPENSSL_sk_push(names, UnsafeRawPointer(entry)) > 0 else {
                GENERAL_NAME_free(entry)
                throw failure("OPENSSL_sk_push")
            }
        }
        // RFC 5280 §4.2.1.6: critical when the subject is empty.
        guard X509_add1_ext_i2d(x509, NID_subject_alt_name, UnsafeMutableRawPointer(names), commonName == nil ? 1 : 0, UInt(X509V3_ADD_DEFAULT)) == 1 else {
            throw failure("X509_add1_ext_i2d(subjectAltName)")
        }
    }

    private func failure(_ call: String) -> TLSError {
        TLSError(.setup, "cannot make a certificate: \(call) failed: \(OpenSSLErrors.drainReasons())")
    }

    static func seconds(_ date: Date) -> time_t {
        time_t(date.timeIntervalSince1970.rounded(.down))
    }
}
