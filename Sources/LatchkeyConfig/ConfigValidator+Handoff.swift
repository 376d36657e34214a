extension ConfigValidator {
    /// A route's `handoff:`. The endpoint is called with the route's credentials, so a route
    /// that injects none cannot have one.
    mutating func validateHandoff(_ raw: ConfigMapping?, upstream: UpstreamConfig?, injects: Bool) -> HandoffConfig? {
        guard let raw else { return nil }
        let path = raw.path
        var valid = true
        if !injects {
            diagnostics.error(path, "a handoff on a route that injects no credential",
                              expected: "an inject: entry whose credential or identity the endpoint accepts")
            valid = false
        }
        var url = ""
        switch raw.string("url") {
        case nil:
            diagnostics.error(path, "missing key 'url'", expected: "the handoff endpoint: a path on the upstream such as /session/from_token, or an http(s) URL")
            valid = false
        case let relative? where relative.hasPrefix("/"):
            if relative.hasPrefix("//") || relative.utf8.contains(where: { ConfigSyntax.isControl($0) || $0 == 0x20 || $0 == UInt8(ascii: "#") }) {
                diagnostics.error(path / "url", "not a path", expected: "a path such as /session/from_token")
                valid = false
            }
            url = (upstream.flatMap { UpstreamTarget(url: $0.url) }.map { $0.origin + $0.basePath } ?? "") + relative
        case let absolute?:
            if case .failure(let failure) = ConfigSyntax.endpointURL(absolute, example: "https://app.example.com/session/from_token") {
                diagnostics.error(path / "url", failure.message, expected: failure.expected)
                valid = false
            }
            url = absolute
        }
        let method = raw.string("method") ?? "POST"
        if !ConfigSyntax.isToken(method) || method.uppercased() != method {
            diagnostics.error(path / "method", "invalid method", expected: "an upper-case method such as POST or GET")
            valid = false
        }
        var statuses: Set<Int> = []
        for (index, status) in raw.ints("expect_status") ?? [] {
            if (200...399).contains(status) {
                statuses.insert(status)
            } else {
                diagnostics.error((path / "expect_status")[index], "not a success or redirect status", expected: "a status from 200 to 399, such as 200")
                valid = false
            }
        }
        guard valid else { return nil }
        return HandoffConfig(url: url, method: method, expectedStatuses: statuses, beforeFirstPage: raw.bool("before_first_page") ?? false)
    }

    /// `jar: client | proxy`. The proxy keeps a jar per identity, so a route whose jar is
    /// the proxy's must inject one.
    mutating func validateCookieJar(_ raw: String?, identity: String?, at path: ConfigPath) -> CookieJarMode {
        guard let raw else { return .client }
        guard let mode = CookieJarMode(rawValue: raw) else {
            diagnostics.error(path, "unknown jar\(ConfigSyntax.quoted(raw))", expected: "client (the default) or proxy")
            return .client
        }
        if mode == .proxy, identity == nil {
            diagnostics.error(path, "jar: proxy on a route that injects no identity",
                              expected: "an inject: entry with identity:, whose cookies the proxy keeps")
        }
        return mode
    }
}
