import COpenSSL
import COpenSSLShims
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Certificate {
    /// The subject in RFC 2253's order and escaping, "CN=svc,O=example".
    public var subject: String {
        Self.rfc2253(X509_get_subject_name(x509))
    }

    public var issuer: String {
        Self.rfc2253(X509_get_issuer_name(x509))
    }

    /// The start of the validity period (RFC 5280 §4.1.2.5).
    public var notBefore: Date {
        Self.date(X509_get0_notBefore(x509))
    }

    /// The end of the validity period; the certificate is valid through this second.
    public var notAfter: Date {
        Self.date(X509_get0_notAfter(x509))
    }

    /// The key belongs to this certificate (X509_check_private_key: the public halves match).
    public func matches(_ key: PrivateKey) -> Bool {
        OpenSSLErrors.clear()
        defer { OpenSSLErrors.clear() }
        return X509_check_private_key(x509, key.pkey) == 1
    }

    /// A CA certificate (basicConstraints CA:TRUE, RFC 5280 §4.2.1.9), which may sign others.
    public var isCertificateAuthority: Bool {
        X509_check_ca(x509) >= 1
    }

    /// The same certificate (X509_cmp compares the DER encodings' digests).
    public func isSame(as other: Certificate) -> Bool {
        self === other || X509_cmp(x509, other.x509) == 0
    }

    /// The subject alternative names (RFC 5280 §4.2.1.6), DNS names and IP addresses in
    /// their text form, in the certificate's order; others (e-mail, URI) are left out.
    public var names: [String] {
        guard let raw = X509_get_ext_d2i(x509, NID_subject_alt_name, nil, nil) else { return [] }
        let stack = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(stack) }
        return (0..<OPENSSL_sk_num(stack)).compactMap { index -> String? in
            guard let entry = OPENSSL_sk_value(stack, index)?.assumingMemoryBound(to: GENERAL_NAME.self) else { return nil }
            switch entry.pointee.type {
            case GEN_DNS: return SubjectAlternativeName.text(ofDNS: entry.pointee.d.dNSName)
            case GEN_IPADD: return SubjectAlternativeName.text(ofIP: entry.pointee.d.iPAddress)
            default: return nil
            }
        }
    }

    private static func rfc2253(_ name: OpaquePointer?) -> String {
        guard let name, let bio = try? MemoryBIO() else { return "" }
        X509_NAME_print_ex(bio.bio, name, 0, LK_XN_FLAG_RFC2253)
        return String(decoding: bio.drain(), as: UTF8.self)
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
