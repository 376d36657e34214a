#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The environment `latchkey exec` gives its command: the proxy and the trust it needs, and
/// nothing secret. Every variable set here replaces the parent's (whatever its case), so a
/// program never sees two proxies or two CA bundles; variables the configuration reads
/// secrets from are withheld.
public struct ChildEnvironment: Sendable {
    /// The forward proxy, with the per-run secret as its password.
    public let proxyURL: String
    /// A reverse listener's base URL, when exec has one.
    public let reverseURL: String?
    /// The system's roots and Latchkey's CA, for variables that replace a program's roots.
    public let bundlePath: String
    /// Latchkey's CA alone, for Node's variable, which adds to its built-in roots.
    public let caPath: String
    /// Names never passed on (the configuration's `env:` secrets, the store key).
    public let withheld: Set<String>

    public init(proxyURL: String, reverseURL: String?, bundlePath: String, caPath: String, withheld: Set<String>) {
        self.proxyURL = proxyURL
        self.reverseURL = reverseURL
        self.bundlePath = bundlePath
        self.caPath = caPath
        self.withheld = withheld
    }

    /// Both spellings: curl reads only the lower-case http_proxy (CGI's HTTP_PROXY is
    /// request data), others read either.
    public static let proxyVariables = ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"]
    public static let noProxyVariables = ["NO_PROXY", "no_proxy"]
    /// The local listeners are reached directly, never through the proxy.
    public static let noProxy = "localhost,127.0.0.1,::1"
    /// Each replaces the program's trusted roots: OpenSSL's default (Python's ssl, Ruby,
    /// many others), requests, curl, git, the AWS CLI and SDKs, cargo, Deno.
    public static let bundleVariables = [
        "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "DENO_CERT",
    ]
    /// Adds to Node's built-in roots (read at its start).
    public static let nodeCAVariable = "NODE_EXTRA_CA_CERTS"
    /// Node 24 and later honour the proxy variables only when asked to.
    public static let nodeProxyVariable = "NODE_USE_ENV_PROXY"
    public static let urlVariable = "LATCHKEY_URL"

    /// What exec sets, in a fixed order.
    public var settings: [(name: String, value: String)] {
        var settings = Self.proxyVariables.map { ($0, proxyURL) }
        settings += Self.noProxyVariables.map { ($0, Self.noProxy) }
        settings += Self.bundleVariables.map { ($0, bundlePath) }
        settings.append((Self.nodeCAVariable, caPath))
        settings.append((Self.nodeProxyVariable, "1"))
        if let reverseURL { settings.append((Self.urlVariable, reverseURL)) }
        return settings
    }

    /// The child's environment: `parent`'s, without what exec sets (in any case: a
    /// parent's `Https_Proxy` would be a second proxy to some programs; and a parent's
    /// LATCHKEY_URL even when exec has none to give) and without the withheld names, then
    /// exec's settings.
    public func variables(inheriting parent: [String: String]) -> [String: String] {
        let replaced = Set(settings.map { $0.name.uppercased() } + [Self.urlVariable])
        var variables = parent.filter { name, _ in !replaced.contains(name.uppercased()) && !withheld.contains(name) }
        for (name, value) in settings { variables[name] = value }
        return variables
    }

    /// `NAME=value` lines of what exec sets, with `secret` masked: `--print-env`.
    public func printed(masking secret: String) -> [String] {
        settings.map { name, value in "\(name)=\(value.replacingOccurrences(of: secret, with: "****"))" }
    }
}
