import COpenSSL

/// What the completed handshake agreed, read back from the SSL object.
extension TLSSession {
    public var info: TLSConnectionInfo {
        TLSConnectionInfo(
            protocolVersion: String(cString: SSL_get_version(ssl)),
            cipher: SSL_get_current_cipher(ssl).map { String(cString: SSL_CIPHER_get_name($0)) } ?? "",
            alpn: selectedProtocol,
            resumed: SSL_session_reused(ssl) == 1,
            serverName: SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) },
            clientSubject: SSL_get1_peer_certificate(ssl).map { Certificate(taking: $0).subject })
    }

    private var selectedProtocol: String? {
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &name, &length)
        guard let name, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }
}
