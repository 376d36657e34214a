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
        paths = Paths.make(Paths.Values(caFile: caFile, clientCertificateFile: clientCertificateFile,
                                        clientKeyFile: clientKeyFile, proxy: proxy))
        self.http2 = http2
        self.connectTimeout = connectTimeout
        self.firstByteTimeout = firstByteTimeout
        self.idleTimeout = idleTimeout
        self.refusesLocalDestinations = refusesLocalDestinations
    }

    /// PEM bundle to verify the upstream against instead of the system CAs.
    public var caFile: String? {
        get { paths.values.caFile }
        set { changePaths { $0.caFile = newValue } }
    }

    /// PEM client certificate for mutual TLS.
    public var clientCertificateFile: String? {
        get { paths.values.clientCertificateFile }
        set { changePaths { $0.clientCertificateFile = newValue } }
    }

    /// Its private key.
    public var clientKeyFile: String? {
        get { paths.values.clientKeyFile }
        set { changePaths { $0.clientKeyFile = newValue } }
    }

    /// curl proxy string (`http://host:port`, `socks5h://…`).
    public var proxy: String? {
        get { paths.values.proxy }
        set { changePaths { $0.proxy = newValue } }
    }

    /// The box is shared: a change makes a new one.
    private mutating func changePaths(_ change: (inout Paths.Values) -> Void) {
        var values = paths.values
        change(&values)
        paths = Paths.make(values)
    }

    public static func == (lhs: UpstreamOptions, rhs: UpstreamOptions) -> Bool {
        (lhs.paths === rhs.paths || lhs.paths.values == rhs.paths.values) && lhs.http2 == rhs.http2
            && lhs.connectTimeout == rhs.connectTimeout && lhs.firstByteTimeout == rhs.firstByteTimeout
            && lhs.idleTimeout == rhs.idleTimeout && lhs.refusesLocalDestinations == rhs.refusesLocalDestinations
    }

    /// The files and the proxy, never changed in place.
    private final class Paths: Sendable {
        struct Values: Equatable {
            var caFile: String?
            var clientCertificateFile: String?
            var clientKeyFile: String?
            var proxy: String?
        }

        /// Most routes' (and every default's): no allocation for them.
        private static let none = Paths(values: Values())

        let values: Values

        private init(values: Values) {
            self.values = values
        }

        static func make(_ values: Values) -> Paths {
            values == Values() ? none : Paths(values: values)
        }
    }
}
