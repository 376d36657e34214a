import COpenSSL
import Foundation
@testable import LatchkeyTLS

/// OpenSSL's own verdict on a minted chain: X509_verify_cert against a store holding only
/// `root`, for a TLS server (purpose sslserver) named `host` or at `ip`, at `time`.
enum ChainVerifier {
    /// nil when the chain verifies; otherwise OpenSSL's reason.
    static func verify(_ identity: TLSIdentity, root: Certificate, host: String? = nil, ip: String? = nil, at time: Date) -> String? {
        let store = X509_STORE_new()!
        defer { X509_STORE_free(store) }
        X509_STORE_add_cert(store, root.x509)
        let untrusted = OPENSSL_sk_new_null()!
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in identity.chain.dropFirst() { OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.x509)) }
        let context = X509_STORE_CTX_new()!
        defer { X509_STORE_CTX_free(context) }
        X509_STORE_CTX_init(context, store, identity.leaf.x509, untrusted)
        X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER)
        let parameters = X509_STORE_CTX_get0_param(context)
        X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970))
        if let host { X509_VERIFY_PARAM_set1_host(parameters, host, 0) }
        if let ip { X509_VERIFY_PARAM_set1_ip_asc(parameters, ip) }
        guard X509_verify_cert(context) != 1 else { return nil }
        return String(cString: X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(context))))
    }

    /// Whether the extension `nid` is present and marked critical; nil when absent.
    static func isCritical(_ certificate: Certificate, _ nid: Int32) -> Bool? {
        let index = X509_get_ext_by_NID(certificate.x509, nid, -1)
        guard index >= 0 else { return nil }
        return X509_EXTENSION_get_critical(X509_get_ext(certificate.x509, index)) == 1
    }
}

/// A directory of its own under the temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "latchkey-tls-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ bytes: [UInt8], mode: Int = 0o600) -> String {
        let file = path + "/" + name
        precondition(FileManager.default.createFile(atPath: file, contents: Data(bytes)))
        // chmod(2) after creating: the umask does not apply to it.
        precondition(chmod(file, mode_t(mode)) == 0)
        return file
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
