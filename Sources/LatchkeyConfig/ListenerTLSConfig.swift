/// A listener's `tls:`: where its certificate comes from, and how long a handshake may take.
public struct ListenerTLSConfig: Sendable, Equatable {
    public enum Certificate: Sendable, Equatable {
        /// `cert_file` (PEM, the leaf then its chain) and `key_file` (PEM, private to the
        /// owner); both re-read when they change.
        case files(certFile: String, keyFile: String)
        /// `local_ca: true`: a leaf for the listener's names minted by the local CA.
        case localCA
    }

    public var certificate: Certificate
    /// `handshake_timeout`: a client that has not completed its handshake by then is closed.
    public var handshakeTimeout: Duration

    public static let defaultHandshakeTimeout = Duration.seconds(10)

    public init(certificate: Certificate, handshakeTimeout: Duration = Self.defaultHandshakeTimeout) {
        self.certificate = certificate
        self.handshakeTimeout = handshakeTimeout
    }
}

/// `ca: { cert_file, key_file }`: the user's own CA, which mints the local-CA listeners'
/// certificates instead of the one Latchkey makes.
public struct CertificateAuthoritySettings: Sendable, Equatable {
    public var certFile: String
    public var keyFile: String

    public init(certFile: String, keyFile: String) {
        self.certFile = certFile
        self.keyFile = keyFile
    }
}
