extension ConfigValidator {
    static let tlsCertificateExpectation = "cert_file and key_file, or local_ca: true"

    /// `listeners[].tls`: where the certificate comes from (exactly one of the files or the
    /// local CA) and the handshake's time limit. The files' contents are `check`'s and the
    /// runtime's to judge; here they are only placed.
    mutating func validateListenerTLS(_ raw: ConfigMapping, address: ListenAddress?) -> ListenerTLSConfig? {
        let path = raw.path
        if case .unix? = address {
            // Only processes allowed to open the socket reach it: nothing on the way to protect.
            diagnostics.error(path, "TLS on a Unix socket listener", expected: "no tls on a unix: listener, or a host:port to listen on")
        }
        let certFile = tlsFile(raw, "cert_file", expected: "the PEM file holding the certificate, then its chain")
        let keyFile = tlsFile(raw, "key_file", expected: "the PEM file holding the certificate's private key")
        let localCA = raw.bool("local_ca") ?? false
        let handshakeTimeout = positiveDuration(raw, "handshake_timeout") ?? ListenerTLSConfig.defaultHandshakeTimeout
        let files = ["cert_file", "key_file"].filter { raw.node($0) != nil }
        if localCA {
            guard files.isEmpty else {
                diagnostics.error(path / "local_ca", "local_ca beside \(files.joined(separator: " and "))", expected: Self.tlsCertificateExpectation)
                return nil
            }
            return ListenerTLSConfig(certificate: .localCA, handshakeTimeout: handshakeTimeout)
        }
        guard !files.isEmpty else {
            diagnostics.error(path, "tls names no certificate", expected: Self.tlsCertificateExpectation)
            return nil
        }
        requireBoth(raw, expected: "cert_file and key_file together, or local_ca: true")
        guard let certFile, let keyFile else { return nil }
        let certificate = ListenerTLSConfig.Certificate.files(certFile: certFile, keyFile: keyFile)
        return ListenerTLSConfig(certificate: certificate, handshakeTimeout: handshakeTimeout)
    }

    /// `inbound.client_ca_file` (mTLS): the CA whose certificates clients must present.
    mutating func clientCAFile(_ raw: ConfigMapping) -> String? {
        tlsFile(raw, "client_ca_file", expected: "the PEM file of the CA that signs the clients' certificates")
    }

    /// `ca:`, the user's own CA: both files, used as they are.
    mutating func validateCertificateAuthority(_ raw: ConfigMapping?) -> CertificateAuthoritySettings? {
        guard let raw else { return nil }
        let certFile = tlsFile(raw, "cert_file", expected: "the CA's certificate (PEM)")
        let keyFile = tlsFile(raw, "key_file", expected: "the CA's private key (PEM), private to the owner")
        requireBoth(raw, expected: "cert_file and key_file; omit ca: for the CA Latchkey makes")
        guard let certFile, let keyFile else { return nil }
        return CertificateAuthoritySettings(certFile: certFile, keyFile: keyFile)
    }

    /// A certificate is given with its key: each missing one is reported.
    private mutating func requireBoth(_ raw: ConfigMapping, expected: String) {
        for key in ["cert_file", "key_file"] where raw.node(key) == nil {
            diagnostics.error(raw.path, "missing key '\(key)'", expected: expected)
        }
    }

    /// A certificate or key file, taken against the config file's directory (what it holds
    /// is read by checkCertificateFiles).
    private mutating func tlsFile(_ raw: ConfigMapping, _ key: String, expected: String) -> String? {
        storePath(raw.string(key), at: raw.path / key, expected: expected)
    }
}
