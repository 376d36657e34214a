import COpenSSL
import COpenSSLShims

/// A server's TLS configuration as one SSL_CTX: the identity it presents, the client CA
/// when it asks for client certificates (mTLS), and the process's ticket keys. Immutable
/// once made, so every loop's connections may share it (SSL_new takes a reference to the
/// SSL_CTX, so a connection keeps the context it started with after a reload replaces it).
public final class TLSServerContext: @unchecked Sendable {
    let context: OpaquePointer
    /// Kept alive for the callback that reads it through the context's ex_data.
    private let ticketKeys: TicketKeyRing

    /// Mozilla's "intermediate" configuration (v5.7) for TLS 1.2; TLS 1.3 keeps OpenSSL's
    /// default suites, all of which the profile accepts.
    static let tls12Ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305"
    static let groups = "X25519:prime256v1:secp384r1"
    /// TLS 1.2 session ids remembered (nginx's shared cache holds about 4,000 per MB).
    static let sessionCacheSize = 20_000
    /// A resumed session (id or ticket) is accepted for two hours, the ticket keys' life.
    static let sessionLifetimeSeconds = 7200
    /// `clientCA`: nil for no client certificates; otherwise clients must present one
    /// these CAs signed, and their names are sent in the CertificateRequest.
    /// `resumptionScope` names where a session may be resumed (the listener): with the
    /// client CAs it makes the session id context, so a ticket issued on another listener,
    /// or before the client CAs changed, is not resumed here (the ticket keys are shared,
    /// and a resumed session skips the client certificate's verification).
    public init(identity: TLSIdentity, clientCA: [Certificate]? = nil, ticketKeys: TicketKeyRing,
                resumptionScope: String) throws(TLSError) {
        OpenSSLErrors.clear()
        defer { OpenSSLErrors.clear() }
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw Self.setupError("SSL_CTX_new") }
        self.context = context
        self.ticketKeys = ticketKeys
        try configureProtocol()
        try configureIdentity(identity)
        if let clientCA { try configureClientVerification(clientCA) }
        try configureSessions(idContext: try Self.sessionIDContext(scope: resumptionScope, clientCA: clientCA))
    }

    deinit {
        SSL_CTX_free(context)
    }

    private func configureProtocol() throws(TLSError) {
        guard lk_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1,
            lk_ssl_ctx_set_max_proto_version(context, TLS1_3_VERSION) == 1 else { throw Self.setupError("protocol versions") }
        guard SSL_CTX_set_cipher_list(context, Self.tls12Ciphers) == 1 else { throw Self.setupError("cipher list") }
        guard lk_ssl_ctx_set1_groups_list(context, Self.groups) == 1 else { throw Self.setupError("groups") }
        // Mozilla intermediate leaves the choice of cipher to the client (which knows
        // whether it has AES hardware); RFC 9325 §3.5 says refuse renegotiation where it
        // is not needed, and compression (CRIME) is never used.
        SSL_CTX_set_options(context, LK_SSL_OP_NO_RENEGOTIATION | LK_SSL_OP_NO_COMPRESSION)
        // Partial writes let a large response go out record by record; the output buffer
        // may move (compaction) between a retried write and the next.
        _ = lk_ssl_ctx_set_mode(context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS))
        SSL_CTX_set_alpn_select_cb(context, { _, selected, selectedLength, offered, offeredLength, _ in
            guard let selected, let selectedLength, let offered else { return SSL_TLSEXT_ERR_ALERT_FATAL }
            let list = UnsafeBufferPointer(start: offered, count: Int(offeredLength))
            guard let range = ALPN.http11(in: list) else {
                // RFC 7301 §3.2: a client whose protocols we do not speak gets
                // no_application_protocol (an h2-only client must not be answered in HTTP/1.1).
                return SSL_TLSEXT_ERR_ALERT_FATAL
            }
            selected.pointee = offered + range.lowerBound
            selectedLength.pointee = UInt8(range.count)
            return SSL_TLSEXT_ERR_OK
        }, nil)
    }

    private func configureIdentity(_ identity: TLSIdentity) throws(TLSError) {
        guard SSL_CTX_use_certificate(context, identity.leaf.x509) == 1 else { throw Self.setupError("the certificate") }
        for issuer in identity.chain.dropFirst() {
            guard lk_ssl_ctx_add1_chain_cert(context, issuer.x509) == 1 else { throw Self.setupError("the certificate chain") }
        }
        guard SSL_CTX_use_PrivateKey(context, identity.key.pkey) == 1, SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError(.keyMismatch, "the private key does not belong to the certificate (\(OpenSSLErrors.drainReasons()))")
        }
    }

    private func configureClientVerification(_ authorities: [Certificate]) throws(TLSError) {
        guard !authorities.isEmpty, let store = SSL_CTX_get_cert_store(context) else { throw Self.setupError("the client CA") }
        for authority in authorities {
            // SSL_CTX_add_client_CA: its subject goes into the CertificateRequest's
            // certificate_authorities, so a client with several certificates picks ours.
            guard X509_STORE_add_cert(store, authority.x509) == 1, SSL_CTX_add_client_CA(context, authority.x509) == 1 else {
                throw Self.setupError("the client CA")
            }
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
    }

    private func configureSessions(idContext: [UInt8]) throws(TLSError) {
        _ = lk_ssl_ctx_set_session_cache_mode(context, Int(SSL_SESS_CACHE_SERVER))
        _ = lk_ssl_ctx_sess_set_cache_size(context, Self.sessionCacheSize)
        _ = SSL_CTX_set_timeout(context, Self.sessionLifetimeSeconds)
        guard SSL_CTX_set_session_id_context(context, idContext, UInt32(idContext.count)) == 1,
            ticketKeys.install(on: context) else { throw Self.setupError("session resumption") }
    }

    /// SHA-256 (32 bytes, SSL_MAX_SID_CTX_LENGTH) over the scope and each client CA's DER.
    static func sessionIDContext(scope: String, clientCA: [Certificate]?) throws(TLSError) -> [UInt8] {
        var input = Array("latchkey session scope \(scope)".utf8)
        for authority in clientCA ?? [] {
            var der: UnsafeMutablePointer<UInt8>?
            let count = i2d_X509(authority.x509, &der)
            guard count > 0, let der else { throw setupError("the client CA's encoding") }
            input.append(contentsOf: UnsafeBufferPointer(start: der, count: Int(count)))
            CRYPTO_free(der, #fileID, #line)
        }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(input, input.count, &output, &length, EVP_sha256(), nil) == 1 else { throw setupError("a digest") }
        return Array(output.prefix(Int(length)))
    }

    private static func setupError(_ what: String) -> TLSError {
        TLSError(.setup, "OpenSSL refused \(what) (\(OpenSSLErrors.drainReasons()))")
    }
}
