// The config file as written: snake_case keys, every field optional. Each type lists its
// keys in `CodingKeys: CaseIterable`, which is also the list of keys it accepts; anything
// else in its mapping is reported as an unknown key. Defaults and cross-checks are applied
// later by `ConfigValidator`.

struct RawConfig: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case server, listeners, credentials, identities, store, routes, limits, logging
    }

    var server: RawServer?
    var listeners: LenientList<RawListener>?
    var credentials: LenientMap<RawSecret>?
    var identities: LenientMap<RawIdentity>?
    var store: RawStore?
    var routes: LenientList<RawRoute>?
    var limits: RawLimits?
    var logging: RawLogging?

    init() {}

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with keys such as listeners, credentials and routes", extensionPrefix: "x-")
        server = f(.server)
        listeners = f(.listeners)
        credentials = f(.credentials)
        identities = f(.identities)
        store = f(.store)
        routes = f(.routes)
        limits = f(.limits)
        logging = f(.logging)
    }
}

struct RawServer: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case loops, grace_period
    }

    var loops: Int?
    var gracePeriod: RawDuration?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping")
        loops = f(.loops)
        gracePeriod = f(.grace_period)
    }
}

/// Where identities' tokens are kept: `store: { type: file, path: DIR, key_file: FILE }`
/// or `store: { type: redis, url: URL, key_prefix: TEXT, password: SECRET, key_file: FILE }`.
struct RawStore: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case type, path, key_file, url, key_prefix, password
    }

    var type: String?
    var path: String?
    var keyFile: String?
    var url: String?
    var keyPrefix: String?
    var password: RawSecret?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with type, and path or url")
        type = f(.type)
        path = f(.path)
        keyFile = f(.key_file)
        url = f(.url)
        keyPrefix = f(.key_prefix)
        password = f(.password)
    }
}

struct RawListener: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, listen, allowed_hosts, allowed_origins, inbound
    }

    var name: String?
    var listen: String?
    var allowedHosts: LenientList<String>?
    var allowedOrigins: LenientList<String>?
    var inbound: RawInbound?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with a listen address")
        name = f(.name)
        listen = f(.listen)
        allowedHosts = f(.allowed_hosts)
        allowedOrigins = f(.allowed_origins)
        inbound = f(.inbound)
    }
}

struct RawInbound: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case shared_secret, session, open
    }

    var sharedSecret: RawSharedSecret?
    var session: RawSession?
    var open: Bool?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with shared_secret, session or open")
        sharedSecret = f(.shared_secret)
        session = f(.session)
        open = f(.open)
    }
}

struct RawSession: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case key_file, previous_key_files, lifetime, link_lifetime
    }

    var keyFile: String?
    var previousKeyFiles: LenientList<String>?
    var lifetime: RawDuration?
    var linkLifetime: RawDuration?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with key_file")
        keyFile = f(.key_file)
        previousKeyFiles = f(.previous_key_files)
        lifetime = f(.lifetime)
        linkLifetime = f(.link_lifetime)
    }
}

struct RawSharedSecret: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case header, value, env, file
    }

    var header: String?
    var secret: RawSecret

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with header and one of value, env, file")
        header = f(.header)
        secret = RawSecret(value: f(.value), env: f(.env), file: f(.file))
    }
}

/// A secret: exactly one of `value` (inline), `env` (variable name) or `file` (path).
struct RawSecret: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case value, env, file
    }

    var value: String?
    var env: String?
    var file: String?

    init(value: String?, env: String?, file: String?) {
        self.value = value
        self.env = env
        self.file = file
    }

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with one of value, env, file")
        value = f(.value)
        env = f(.env)
        file = f(.file)
    }
}

struct RawRoute: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, listeners, path, host, upstream, strip_prefix, replace_prefix, inject
        case pass_client_authorization, preserve_host, via, cookies, secret_query_params
        case renew_on, renew_on_invalid_token, replay_limit, selectable_identities, handoff, jar, allow_methods
    }

    var name: String?
    var listeners: LenientList<String>?
    var path: String?
    var host: String?
    var upstream: RawUpstream?
    var stripPrefix: Bool?
    var replacePrefix: String?
    var inject: LenientList<RawInjection>?
    var passClientAuthorization: Bool?
    var preserveHost: Bool?
    var via: String?
    var cookies: RawCookies?
    var secretQueryParams: LenientList<String>?
    var renewOn: LenientList<Int>?
    var renewOnInvalidToken: Bool?
    var replayLimit: RawByteSize?
    var selectableIdentities: LenientList<String>?
    var handoff: RawHandoff?
    var jar: String?
    var allowMethods: LenientList<String>?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with path and upstream")
        name = f(.name)
        listeners = f(.listeners)
        path = f(.path)
        host = f(.host)
        upstream = f(.upstream)
        stripPrefix = f(.strip_prefix)
        replacePrefix = f(.replace_prefix)
        inject = f(.inject)
        passClientAuthorization = f(.pass_client_authorization)
        preserveHost = f(.preserve_host)
        via = f(.via)
        cookies = f(.cookies)
        secretQueryParams = f(.secret_query_params)
        renewOn = f(.renew_on)
        renewOnInvalidToken = f(.renew_on_invalid_token)
        replayLimit = f(.replay_limit)
        selectableIdentities = f(.selectable_identities)
        handoff = f(.handoff)
        jar = f(.jar)
        allowMethods = f(.allow_methods)
    }
}

/// `handoff: { url, method, expect_status, before_first_page }` on a route.
struct RawHandoff: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, method, expect_status, before_first_page
    }

    var url: String?
    var method: String?
    var expectStatus: LenientList<Int>?
    var beforeFirstPage: Bool?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with the handoff endpoint's url")
        url = f(.url)
        method = f(.method)
        expectStatus = f(.expect_status)
        beforeFirstPage = f(.before_first_page)
    }
}

/// `upstream: https://host/base` or the long form with TLS and timeout settings.
struct RawUpstream: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, ca_file, client_cert, client_key, http2, proxy
        case connect_timeout, first_byte_timeout, idle_timeout
    }

    var url: String?
    /// True for the short form; paths then point at `upstream` itself, not `upstream.url`.
    var isShortForm = false
    var caFile: String?
    var clientCert: String?
    var clientKey: String?
    var http2: Bool?
    var proxy: String?
    var connectTimeout: RawDuration?
    var firstByteTimeout: RawDuration?
    var idleTimeout: RawDuration?

    init(from decoder: any Decoder) throws {
        if let url = try? decoder.singleValueContainer().decode(String.self) {
            self.url = url
            isShortForm = true
            return
        }
        let f = try decoder.rawFields(CodingKeys.self, expected: "a URL, or a mapping with url and TLS or timeout settings")
        url = f(.url)
        caFile = f(.ca_file)
        clientCert = f(.client_cert)
        clientKey = f(.client_key)
        http2 = f(.http2)
        proxy = f(.proxy)
        connectTimeout = f(.connect_timeout)
        firstByteTimeout = f(.first_byte_timeout)
        idleTimeout = f(.idle_timeout)
    }
}

/// One credential to attach: exactly one of `header`, `query`, `cookie`.
struct RawInjection: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case header, query, cookie, value, credential, identity
    }

    var header: String?
    var query: String?
    var cookie: String?
    var value: String?
    var credential: String?
    var identity: String?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping with header, query or cookie, and credential or identity")
        header = f(.header)
        query = f(.query)
        cookie = f(.cookie)
        value = f(.value)
        credential = f(.credential)
        identity = f(.identity)
    }
}

struct RawCookies: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case domain, map_path, drop_secure_on_loopback
    }

    var domain: String?
    var mapPath: Bool?
    var dropSecureOnLoopback: Bool?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping")
        domain = f(.domain)
        mapPath = f(.map_path)
        dropSecureOnLoopback = f(.drop_secure_on_loopback)
    }
}

struct RawLimits: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case max_request_line, max_header_bytes, max_headers, max_body_bytes, max_connections
        case head_timeout, idle_timeout, body_timeout
    }

    var maxRequestLine: RawByteSize?
    var maxHeaderBytes: RawByteSize?
    var maxHeaders: Int?
    var maxBodyBytes: RawByteSize?
    var maxConnections: Int?
    var headTimeout: RawDuration?
    var idleTimeout: RawDuration?
    var bodyTimeout: RawDuration?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping")
        maxRequestLine = f(.max_request_line)
        maxHeaderBytes = f(.max_header_bytes)
        maxHeaders = f(.max_headers)
        maxBodyBytes = f(.max_body_bytes)
        maxConnections = f(.max_connections)
        headTimeout = f(.head_timeout)
        idleTimeout = f(.idle_timeout)
        bodyTimeout = f(.body_timeout)
    }
}

struct RawLogging: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case level, format, access_log
    }

    var level: String?
    var format: String?
    var accessLog: Bool?

    init(from decoder: any Decoder) throws {
        let f = try decoder.rawFields(CodingKeys.self, expected: "a mapping")
        level = f(.level)
        format = f(.format)
        accessLog = f(.access_log)
    }
}
