/// Who speaks HTTP to a route's upstream, decided once per route from its settings.
public enum UpstreamPath: Sendable, Equatable {
    /// Latchkey's own HTTP/1.1 exchange (`HTTP1Transfer`) over a pooled connection that
    /// libcurl opened: its request line, fields and status line cost a fraction of curl's
    /// per-transfer HTTP work.
    case http1
    /// libcurl's full transfer (`CurlTransfer`), for what only it gives.
    case curl

    /// - Parameters:
    ///   - cookieJar: the route keeps the upstream's cookies in a jar.
    ///   - forcesCurl: the route asks for libcurl's full transfers whatever else it says.
    public init(url: String, options: UpstreamOptions, cookieJar: Bool, forcesCurl: Bool = false) {
        let scheme = url.prefix { $0 != ":" }.lowercased()
        guard !forcesCurl, scheme == "http" || scheme == "https" else {
            self = .curl
            return
        }
        // HTTP/2 is negotiated by ALPN and framed by libcurl (nghttp2).
        if options.http2 {
            self = .curl
            return
        }
        // libcurl's cookie engine picks the jar's cookies for each URL and files the
        // response's Set-Cookie in the jar; the share answers no "Cookie field for this URL"
        // outside a transfer.
        if cookieJar {
            self = .curl
            return
        }
        // Through an HTTP proxy, libcurl sends a plain http:// request to the proxy in
        // absolute form, as forward proxies expect; a raw connection would need a CONNECT
        // tunnel to port 80, which proxies commonly refuse (Squid's default allows CONNECT
        // to 443 only). A SOCKS proxy and an https:// upstream are tunnels either way.
        if let proxy = options.proxy, scheme == "http", !proxy.lowercased().hasPrefix("socks") {
            self = .curl
            return
        }
        self = .http1
    }
}
