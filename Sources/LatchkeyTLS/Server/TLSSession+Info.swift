import COpenSSL
import COpenSSLShims

/// What the completed handshake agreed, read back from the SSL object.
extension TLSSession {
    public var info: TLSConnectionInfo {
        TLSConnectionInfo(
            protocolVersion: String(cString: SSL_get_version(ssl)),
            cipher: SSL_get_current_cipher(ssl).map { String(cString: SSL_CIPHER_get_name($0)) } ?? "",
            alpn: selectedProtocol,
            resumed: SSL_session_reused(ssl) == 1,
            serverName: SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) },
            clientSubject: SSL_get0_peer_certificate(ssl).map { Self.rfc2253(X509_get_subject_name($0)) })
    }

    private var selectedProtocol: String? {
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &name, &length)
        guard let name, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }

    /// X509_NAME_print_ex with RFC 2253's flags ("CN=svc,O=example").
    private static func rfc2253(_ name: OpaquePointer?) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, name, 0, LK_XN_FLAG_RFC2253) >= 0 else { return "" }
        var text = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        let count = BIO_read(bio, &text, Int32(text.count))
        return String(decoding: text.prefix(max(0, Int(count))), as: UTF8.self)
    }
}
