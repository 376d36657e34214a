import LatchkeyHTTP
import LatchkeyLogging
import LatchkeyUpstream

/// The validated configuration Latchkey runs with. Built by `ConfigLoader` from YAML or
/// from the quick-start flags; everything here has passed validation, so the data plane
/// never re-checks it.
public struct Config: Sendable, Equatable {
    public var server: ServerSettings
    public var listeners: [ListenerConfig]
    public var routes: [RouteConfig]
    public var credentials: [String: SecretSource]
    public var identities: [IdentityConfig]
    public var store: TokenStoreSettings
    public var limits: Limits
    public var logging: LoggingSettings
    /// `ca:`: a certificate authority of the user's own for `local_ca` listeners; nil for
    /// the one Latchkey makes beside the token store.
    public var ca: CertificateAuthoritySettings?

    public init(
        server: ServerSettings = .init(),
        listeners: [ListenerConfig],
        routes: [RouteConfig],
        credentials: [String: SecretSource] = [:],
        identities: [IdentityConfig] = [],
        store: TokenStoreSettings = .init(),
        limits: Limits = .init(),
        logging: LoggingSettings = .init(),
        ca: CertificateAuthoritySettings? = nil
    ) {
        self.server = server
        self.listeners = listeners
        self.routes = routes
        self.credentials = credentials
        self.identities = identities
        self.store = store
        self.limits = limits
        self.logging = logging
        self.ca = ca
    }
}

public struct ServerSettings: Sendable, Equatable {
    /// Event loops; nil means one per core.
    public var loops: Int?
    /// How long in-flight requests may take to finish after SIGTERM/SIGINT.
    public var gracePeriod: Duration

    public init(loops: Int? = nil, gracePeriod: Duration = .seconds(10)) {
        self.loops = loops
        self.gracePeriod = gracePeriod
    }
}

public enum ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// host is an IPv4 or IPv6 literal (no brackets) or "localhost".
    case tcp(host: String, port: Int)
    case unix(path: String)

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}

public struct ListenerConfig: Sendable, Equatable {
    public var name: String
    public var address: ListenAddress
    /// Host header values accepted beyond the loopback names with the listen port.
    public var allowedHosts: [String]
    /// Browser origins (lower-cased, `scheme://host[:port]`) whose requests may use the
    /// credentials although they are another site: an app under development on another port.
    public var allowedOrigins: [String]
    public var inbound: InboundAccess
    /// Clients reach this listener over TLS (`tls:`); nil for plain HTTP.
    public var tls: ListenerTLSConfig?
    /// A reverse proxy (the default: clients send origin-form requests to it), or an HTTP
    /// proxy for `HTTP_PROXY`/`HTTPS_PROXY` clients (`mode: forward`).
    public var mode: ListenerMode
    /// `mode: forward`: hosts no route names that CONNECT may reach through a raw byte
    /// tunnel and absolute-form requests may reach untouched, with no credentials added.
    public var tunnel: [HostPattern]
    /// `mode: forward`: the secret clients present with `Proxy-Authorization: Basic`
    /// (`inbound.proxy_auth`), checked besides the listener's inbound check.
    public var proxyAuth: SecretSource?

    public init(name: String, address: ListenAddress, allowedHosts: [String] = [], allowedOrigins: [String] = [],
                inbound: InboundAccess = .loopbackOnly, tls: ListenerTLSConfig? = nil, mode: ListenerMode = .reverse,
                tunnel: [HostPattern] = [], proxyAuth: SecretSource? = nil) {
        self.name = name
        self.address = address
        self.allowedHosts = allowedHosts
        self.allowedOrigins = allowedOrigins
        self.inbound = inbound
        self.tls = tls
        self.mode = mode
        self.tunnel = tunnel
        self.proxyAuth = proxyAuth
    }
}

extension Config {
    /// Whether a forward listener passes some hosts through (`tunnel:`).
    public var hasTunnelHosts: Bool {
        listeners.contains { $0.mode == .forward && !$0.tunnel.isEmpty }
    }
}

/// What kind of proxy a listener is (`listeners[].mode`).
public enum ListenerMode: String, Sendable, Equatable, CaseIterable {
    /// Clients address the proxy itself; routes map its paths to upstreams.
    case reverse
    /// Clients address the upstream through the proxy: absolute-form requests and CONNECT
    /// (RFC 9110 §9.3.6), routed by their target host.
    case forward
}

/// Who may use a listener.
public enum InboundAccess: Sendable, Equatable {
    /// The default: only valid on loopback and Unix-socket listeners.
    case loopbackOnly
    /// Every request must carry `header` with the secret's value.
    case sharedSecret(header: String, secret: SecretSource)
    /// Every request must carry the proxy's signed session cookie (browsers on another
    /// machine, with a link from `latchkey login-link`).
    case session(SessionSettings)
    /// Explicitly open to anyone who can reach the listener.
    case open
    /// mTLS (`client_ca_file`, TLS listeners only): the handshake requires a client
    /// certificate signed by a CA of this PEM file.
    case clientCertificate(caFile: String)
}

/// Where a secret comes from. Files are re-read when they change, as Kubernetes rotates
/// mounted secrets.
public enum SecretSource: Sendable, Equatable {
    case inline(String)
    case environment(String)
    case file(String)
}

public struct RouteConfig: Sendable, Equatable {
    public var name: String
    /// Listener names this route serves; empty means every listener.
    public var listeners: [String]
    /// Path prefix, starting with "/". Longest prefix wins.
    public var pathPrefix: String
    /// Optional Host to match (without port), case-insensitive.
    public var host: String?
    public var upstream: UpstreamConfig
    /// What replaces the matched prefix before the upstream's base path is prepended:
    /// "" strips it (the default), nil keeps it.
    public var prefixReplacement: String?
    public var injections: [Injection]
    /// Forward the client's own Authorization header even though the route injects one.
    public var passClientAuthorization: Bool
    /// Keep the client's Host instead of the upstream's.
    public var preserveHost: Bool
    /// Add a Via header with this pseudonym.
    public var via: String?
    public var cookies: CookieRewrite
    /// Query parameters whose values are redacted in logs (injected ones always are).
    public var secretQueryParameters: [String]
    /// When an identity's token is renewed and the request replayed.
    public var renewal: RenewalPolicy
    /// Other identities than the injected one that a request may pick with the
    /// `Latchkey-Identity` header, and that `latchkey use` may make the route's default.
    public var selectableIdentities: [String]
    /// Where a browser gets its web session from, if the route gives one.
    public var handoff: HandoffConfig?
    /// Who keeps the upstream's cookies: the client (relayed, rewritten) or the proxy.
    public var cookieJar: CookieJarMode
    /// Methods refused on a route that injects credentials unless listed here: `TRACE` and
    /// `CONNECT`, which an upstream may answer with the request, credential included.
    public var allowedMethods: [String]
    /// `allow:`: when not empty, the only requests the route forwards (a method and a path
    /// pattern each); others are answered 403.
    public var allow: [AllowRule]
    /// `upgrades:` and `unlisted_upgrades:`.
    public var upgrades: UpgradeSettings

    public init(
        name: String, listeners: [String] = [], pathPrefix: String = "/", host: String? = nil,
        upstream: UpstreamConfig, prefixReplacement: String? = "", injections: [Injection] = [],
        passClientAuthorization: Bool = false, preserveHost: Bool = false, via: String? = nil,
        cookies: CookieRewrite = .init(), secretQueryParameters: [String] = [], renewal: RenewalPolicy = .init(),
        selectableIdentities: [String] = [], handoff: HandoffConfig? = nil, cookieJar: CookieJarMode = .client,
        allowedMethods: [String] = [], allow: [AllowRule] = [], upgrades: UpgradeSettings = .init()
    ) {
        self.name = name
        self.listeners = listeners
        self.pathPrefix = pathPrefix
        self.host = host
        self.upstream = upstream
        self.prefixReplacement = prefixReplacement
        self.injections = injections
        self.passClientAuthorization = passClientAuthorization
        self.preserveHost = preserveHost
        self.via = via
        self.cookies = cookies
        self.secretQueryParameters = secretQueryParameters
        self.renewal = renewal
        self.selectableIdentities = selectableIdentities
        self.handoff = handoff
        self.cookieJar = cookieJar
        self.allowedMethods = allowedMethods
        self.allow = allow
        self.upgrades = upgrades
    }

    /// The methods `allowedMethods` may list, refused by default where credentials are
    /// injected: `TRACE` and `CONNECT`. Two comparisons, on the path of every request.
    public static func isRefusable(method: String) -> Bool {
        method == "TRACE" || method == "CONNECT"
    }

    /// The identity whose token the route injects, if any (validation allows one).
    public var identity: String? {
        injections.lazy.compactMap { injection -> String? in
            if case .identity(let name) = injection.source { return name }
            return nil
        }.first
    }

    /// The identities the route may inject: the configured one first, then the selectable
    /// ones, each once; empty on a route that injects no identity.
    public var allowedIdentities: [String] {
        guard let identity else { return [] }
        return [identity] + selectableIdentities.filter { $0 != identity }
    }
}

/// On routes that inject an identity's token: which upstream answers mean "this token is
/// no longer good", and how much of a request body is kept to replay it.
public struct RenewalPolicy: Sendable, Equatable {
    public var statuses: Set<Int>
    /// Also renew on any error status with `WWW-Authenticate: Bearer error="invalid_token"`
    /// (RFC 6750 §3.1), which some APIs send with 400 or 403.
    public var onInvalidTokenChallenge: Bool
    /// Request bodies up to this size are kept for a replay; larger ones stream without.
    public var replayLimit: Int
    /// Statuses that refuse the token only when the answer's JSON body says so (TMDB: 401
    /// with `status_code` 3, while its 401 with 7 is a bad API key, which a renewal
    /// cannot fix): `renew_on: [{ status: 401, json: { status_code: 3 } }]`.
    public var bodyMatches: [RenewalBodyMatch]

    public init(statuses: Set<Int> = [401], onInvalidTokenChallenge: Bool = true, replayLimit: Int = 1 << 20,
                bodyMatches: [RenewalBodyMatch] = []) {
        self.statuses = statuses
        self.bodyMatches = bodyMatches
        self.onInvalidTokenChallenge = onInvalidTokenChallenge
        self.replayLimit = replayLimit
    }
}

/// A `renew_on` entry that looks into the answer: its status, and JSON fields its body
/// must hold.
public struct RenewalBodyMatch: Sendable, Equatable {
    public var status: Int
    public var fields: [JSONFieldMatch]

    public init(status: Int, fields: [JSONFieldMatch]) {
        self.status = status
        self.fields = fields
    }
}

public struct UpstreamConfig: Sendable, Equatable {
    /// http or https URL with an optional base path, no query or fragment.
    public var url: String
    /// TLS files, HTTP/2, an HTTP proxy and timeouts: handed to the upstream client as is.
    public var options: UpstreamOptions
    /// `engine: libcurl`: libcurl's full transfers even where Latchkey's own HTTP/1.1 would
    /// serve (`UpstreamPath`), should an upstream need curl's leniency.
    public var forcesLibcurl: Bool

    public init(url: String, options: UpstreamOptions = .init(), forcesLibcurl: Bool = false) {
        self.url = url
        self.options = options
        self.forcesLibcurl = forcesLibcurl
    }
}

/// One credential attached to each request of a route.
public struct Injection: Sendable, Equatable {
    public enum Target: Sendable, Equatable {
        /// A field name, recognised once here rather than on every request.
        case header(HTTPField.Name)
        case query(String)
        case cookie(String)
    }

    /// Where the value comes from.
    public enum Source: Sendable, Equatable, Hashable {
        /// An entry in `Config.credentials`.
        case credential(String)
        /// The access token of an entry in `Config.identities`.
        case identity(String)
    }

    public var target: Target
    public var source: Source
    /// e.g. "Bearer {token}"; "{token}" alone by default.
    public var template: CredentialTemplate
    /// The capture of a recipe identity the template names (`{session_id}`); nil for the
    /// identity's token or a credential's value.
    public var capture: String?

    public init(target: Target, source: Source, template: CredentialTemplate, capture: String? = nil) {
        self.target = target
        self.source = source
        self.template = template
        self.capture = capture
    }
}

/// `jar:` on a route.
public enum CookieJarMode: String, Sendable, Equatable {
    /// The upstream's Set-Cookie goes to the client (rewritten by `cookies:`), which sends
    /// its cookies back itself: the default.
    case client
    /// The proxy keeps the upstream's cookies per identity, in the token store, and sends
    /// them with every request of the identity's jar routes: all clients share one session.
    case proxy
}

/// How the upstream's Set-Cookie is rewritten for the client.
public struct CookieRewrite: Sendable, Equatable {
    public enum DomainRule: Sendable, Equatable {
        case remove
        case keep
        case map(String)
    }

    public var domain: DomainRule
    /// Map cookie Paths under the upstream's base path to the route's prefix.
    public var mapPath: Bool
    /// Drop `Secure` for clients on plain-HTTP loopback, so browsers keep the cookie.
    public var dropSecureOnLoopback: Bool

    public init(domain: DomainRule = .remove, mapPath: Bool = true, dropSecureOnLoopback: Bool = false) {
        self.domain = domain
        self.mapPath = mapPath
        self.dropSecureOnLoopback = dropSecureOnLoopback
    }
}

public struct Limits: Sendable, Equatable {
    public var maxRequestLineBytes: Int
    public var maxHeaderBytes: Int
    public var maxHeaderCount: Int
    /// Largest request body accepted; nil means unlimited (bodies stream).
    public var maxRequestBodyBytes: UInt64?
    /// Client connections for the whole process, all loops together; more are answered
    /// 503 and closed.
    public var maxConnections: Int
    /// Time allowed for a client to send a complete request head.
    public var headTimeout: Duration
    /// Time an idle keep-alive connection is kept open.
    public var idleTimeout: Duration
    /// Time allowed for a whole request body to arrive (time the proxy itself holds the
    /// body back does not count).
    public var bodyTimeout: Duration
    /// Longest silence both ways through a relayed CONNECT tunnel (a forward listener's
    /// `tunnel:` hosts) before it is closed.
    public var tunnelIdleTimeout: Duration
    /// The same for an upgraded connection (a WebSocket); nil, the default, for none.
    public var upgradeIdleTimeout: Duration?
    /// Upstream connections each loop keeps alive between requests (per upstream, for all
    /// together) and for how long.
    public var upstreamPool: PoolLimits

    public init(
        maxRequestLineBytes: Int = 8192, maxHeaderBytes: Int = 65536, maxHeaderCount: Int = 100,
        maxRequestBodyBytes: UInt64? = nil, maxConnections: Int = 10_000,
        headTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60), bodyTimeout: Duration = .seconds(60),
        tunnelIdleTimeout: Duration = .seconds(600), upgradeIdleTimeout: Duration? = nil, upstreamPool: PoolLimits = PoolLimits()
    ) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.maxConnections = maxConnections
        self.headTimeout = headTimeout
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.tunnelIdleTimeout = tunnelIdleTimeout
        self.upgradeIdleTimeout = upgradeIdleTimeout
        self.upstreamPool = upstreamPool
    }
}

public struct LoggingSettings: Sendable, Equatable {
    public var level: String
    public var format: LogFormat
    public var accessLog: Bool

    public init(level: String = "info", format: LogFormat = .text, accessLog: Bool = true) {
        self.level = level
        self.format = format
        self.accessLog = accessLog
    }
}
