/// The keys each mapping of the document accepts, in the order the "expected one of"
/// of an unknown key lists them. A new key goes into its list here and is read where the
/// validator reads its neighbours.
enum ConfigKeys {
    static let root = ["server", "listeners", "credentials", "identities", "store", "routes", "limits", "logging", "ca"]
    static let server = ["loops", "grace_period"]
    /// `store: { type: file, path: DIR, key_file: FILE }` or
    /// `store: { type: redis, url: URL, key_prefix: TEXT, password: SECRET, key_file: FILE }`.
    static let store = ["type", "path", "key_file", "url", "key_prefix", "password"]
    static let listener = ["name", "listen", "mode", "allowed_hosts", "allowed_origins", "inbound", "tls", "tunnel"]
    /// `tls: { cert_file, key_file }` or `tls: { local_ca: true }`.
    static let listenerTLS = ["cert_file", "key_file", "local_ca", "handshake_timeout"]
    /// One of the first four, and `proxy_auth` (a secret: `secret`'s keys) on forward listeners.
    static let inbound = ["shared_secret", "session", "open", "client_ca_file", "proxy_auth"]
    static let session = ["key_file", "previous_key_files", "lifetime", "link_lifetime"]
    static let sharedSecret = ["header", "value", "env", "file"]
    /// A secret: exactly one of `value` (inline), `env` (variable name) or `file` (path).
    static let secret = ["value", "env", "file"]
    static let route = [
        "name", "listeners", "path", "host", "upstream", "strip_prefix", "replace_prefix", "inject",
        "pass_client_authorization", "preserve_host", "via", "cookies", "secret_query_params",
        "renew_on", "renew_on_invalid_token", "replay_limit", "selectable_identities", "handoff", "jar", "allow_methods", "allow",
        "upgrades", "unlisted_upgrades",
    ]
    /// A route's `allow:` entry: `{ method: GET, path: /repos/** }`.
    static let allowRule = ["method", "path"]
    static let handoff = ["url", "method", "expect_status", "before_first_page"]
    /// The long form of `upstream:` (and of an identity's `token_url:` and `issuer:`).
    static let upstream = [
        "url", "ca_file", "client_cert", "client_key", "http2", "proxy",
        "connect_timeout", "first_byte_timeout", "idle_timeout", "engine",
    ]
    /// A `renew_on` entry that looks into the answer's body: `{ status: 401, json: { status_code: 3 } }`.
    static let renewOn = ["status", "json"]
    /// One credential to attach: exactly one of `header`, `query`, `cookie`.
    static let injection = ["header", "query", "cookie", "value", "credential", "identity"]
    static let cookies = ["domain", "map_path", "drop_secure_on_loopback"]
    static let limits = [
        "max_request_line", "max_header_bytes", "max_headers", "max_body_bytes", "max_connections",
        "head_timeout", "idle_timeout", "body_timeout", "tunnel_idle_timeout", "upgrade_idle_timeout",
        "upstream_idle_connections", "upstream_idle_connections_total", "upstream_idle_timeout",
    ]
    static let logging = ["level", "format", "access_log"]
    /// `ca: { cert_file, key_file }`: the user's own CA for `local_ca` listeners.
    static let ca = ["cert_file", "key_file"]
    static let identity = [
        "grant", "grant_type", "params", "token_url", "client_id", "client_secret", "client_auth",
        "username", "password", "refresh_token", "token", "scope", "audience", "resource",
        "acquire", "keep_warm", "clock_skew", "refresh_ahead",
        "key_file", "service_account_file", "assertion_issuer", "subject", "assertion_audience", "key_id",
        "subject_token_file", "subject_token_type", "requested_token_type",
        "client_key_file", "client_key_id", "hook", "issuer",
        "authorization_url", "redirect_port", "redirect_path", "device_authorization_url", "revocation_url",
        "check_on_start", "userinfo_url", "introspection_url",
    ] + recipe

    /// The keys of `grant: recipe` (TheMovieDB's session), and of its mappings below.
    static let recipe = ["base_url", "secrets", "prompts", "steps", "logout", "lifetime", "expires_in", "expires_at"]
    static let recipeStep = ["name", "request", "expect", "capture"]
    /// The `logout` step: nothing it captures would be kept.
    static let recipeLogout = ["name", "request", "expect"]
    static let recipeRequest = ["method", "url", "query", "headers", "json", "form"]
    static let recipeExpect = ["status", "json"]
    /// Exactly one of `json`, `header`, `cookie`.
    static let recipeCapture = ["json", "header", "cookie", "secret"]

    /// Every key outside identities (whose keys the README's grant sections document), and
    /// those of recipes, for the reference config's test.
    static let inReference = Set(
        root + server + store + listener + listenerTLS + inbound + session + sharedSecret + secret + route + allowRule + renewOn + handoff + upstream
            + injection + cookies + limits + logging + ca + recipe + recipeStep + recipeRequest + recipeExpect + recipeCapture
    )
}
