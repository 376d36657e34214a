/// Per-route upstream settings. A `.zero` first-byte or idle timeout disables it; a `.zero`
/// connect timeout leaves curl's default (300 s).
///
/// Copied into every upstream request: its four strings live in one shared, immutable box
/// (`Paths`), so a copy retains one object rather than four strings.
public struct UpstreamOptions: Sendable, Equatable {
    private var paths: Paths
    /// Offer HTTP/2 over TLS (ALPN); plain http stays HTTP/1.1.
    public var http2: Bool
    /// DNS + TCP + TLS handshake.
    public var connectTimeout: Duration
    /// From the end of the request (body handed to curl) to the first response byte.
    public var firstByteTimeout: Duration
    /// Longest silence while the request body uploads or the response body downloads. Not
    /// counted while the transfer waits on our side (request-body bytes from the client,
    /// or `resumeReceiving()` after backpressure).
    public var idleTimeout: Duration
    /// Refuse to connect to an address on loopback, link-local or a cloud metadata service
    /// (`DestinationGuard`): for destinations a client named, which no route vouches for.
    public var refusesLocalDestinations: Bool

    public init(
        caFile: String? = nil,
        clientCertificateFile: String? = nil,
        clientKeyFile: String? = nil,
        http2: Bool = false,
        proxy: String? = nil,
        connectTimeout: Duration = .seconds(5),
        firstByteTimeout: Duration = .seconds(60),
        idleTimeout: Duration = .seconds(60),
        refusesLocalDestinations: Bool = false
    ) {
        paths = caFile == nil && clientCertificateFile == nil && clientKeyFile == nil && proxy == nil
            ? Paths.none
            : Paths(caFile: caFile, clientCertificateFile: clientCertificateFile, clientKeyFile: clientKeyFile, proxy: proxy)
        self.http2 = http2
        self.connectTimeout = connectTimeout
        self.firstByteTimeout = firstByteTimeout
        self.idleTimeout = idleTimeout
        self.refusesLocalDestinations = refusesLocalDestinations
    }

    /// PEM bundle to verify the upstream against instead of the system CAs.
    public var caFile: String? {
        get { paths.caFile }
        set { paths = Paths(caFile: newValue, clientCertificateFile: clientCertificateFile, clientKeyFile: clientKeyFile, proxy: proxy) }
    }

    /// PEM client certificate for mutual TLS.
    public var clientCertificateFile: String? {
        get { paths.clientCertificateFile }
        set { paths = Paths(caFile: caFile, clientCertificateFile: newValue, clientKeyFile: clientKeyFile, proxy: proxy) }
    }

    /// Its private key.
    public var clientKeyFile: String? {
        get { paths.clientKeyFile }
        set { paths = Paths(caFile: caFile, clientCertificateFile: clientCertificateFile, clientKeyFile: newValue, proxy: proxy) }
    }

    /// curl proxy string (`http://host:port`, `socks5h://…`).
    public var proxy: String? {
        get { paths.proxy }
        set { paths = Paths(caFile: caFile, clientCertificateFile: clientCertificateFile, clientKeyFile: clientKeyFile, proxy: newValue) }
    }

    public static func == (lhs: UpstreamOptions, rhs: UpstreamOptions) -> Bool {
        (lhs.paths === rhs.paths || lhs.paths == rhs.paths) && lhs.http2 == rhs.http2
            && lhs.connectTimeout == rhs.connectTimeout && lhs.firstByteTimeout == rhs.firstByteTimeout
            && lhs.idleTimeout == rhs.idleTimeout && lhs.refusesLocalDestinations == rhs.refusesLocalDestinations
    }

    /// The files and the proxy, never changed in place: a setter makes a new box.
    private final class Paths: Sendable, Equatable {
        /// Most routes' (and every default's): no allocation for them.
        static let none = Paths(caFile: nil, clientCertificateFile: nil, clientKeyFile: nil, proxy: nil)

        let caFile: String?
        let clientCertificateFile: String?
        let clientKeyFile: String?
        let proxy: String?

        init(caFile: String?, clientCertificateFile: String?, clientKeyFile: String?, proxy: String?) {
            self.caFile = caFile
            self.clientCertificateFile = clientCertificateFile
            self.clientKeyFile = clientKeyFile
            self.proxy = proxy
        }

        static func == (lhs: Paths, rhs: Paths) -> Bool {
            lhs.caFile == rhs.caFile && lhs.clientCertificateFile == rhs.clientCertificateFile
                && lhs.clientKeyFile == rhs.clientKeyFile && lhs.proxy == rhs.proxy
        }
    }
}
