import LatchkeyHTTP
import LatchkeyUpstream

extension ConfigValidator {
    /// Host names every listener accepts without configuration.
    static let loopbackHostNames: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    mutating func validateRoutes(
        _ raw: [ConfigNode]?, at path: ConfigPath, listeners: Listeners, credentials: Credentials, identities: Identities
    ) -> [RouteConfig] {
        guard let raw, !raw.isEmpty else {
            diagnostics.error(path, "no routes", expected: "at least one route with a path and an upstream")
            return []
        }
        var routes: [RouteConfig] = []
        var firstByName: [String: Int] = [:]
        /// (path, host) → the earlier routes with that match, to find ambiguous pairs.
        var matches: [String: [(index: Int, listeners: [String])]] = [:]
        for (index, node) in raw.enumerated() {
            guard let rawRoute = node.mapping(ConfigKeys.route, expected: "a mapping with path and upstream") else { continue }
            let routePath = node.path
            let givenName = rawRoute.string("name")
            let name = givenName ?? Self.normalizedPrefix(rawRoute.string("path") ?? "/")
            if let first = firstByName[name] {
                diagnostics.error(
                    routePath / (givenName == nil ? "path" : "name"),
                    "duplicate route name\(ConfigSyntax.quoted(name)) (also routes[\(first)])",
                    expected: givenName == nil ? "a name: for this route" : "a unique name for each route"
                )
            } else {
                firstByName[name] = index
            }
            guard let route = validateRoute(rawRoute, listeners: listeners, credentials: credentials, identities: identities) else { continue }
            let matchKey = route.pathPrefix + " " + (route.host ?? "")
            for earlier in matches[matchKey] ?? [] where Self.overlap(earlier.listeners, route.listeners) {
                diagnostics.error(
                    routePath / "path",
                    "same path\(route.host == nil ? "" : " and host") as routes[\(earlier.index)] on the same listener",
                    expected: "a different path, host or listeners"
                )
            }
            matches[matchKey, default: []].append((index, route.listeners))
            routes.append(route)
        }
        return routes
    }

    /// Trailing slashes dropped, so that "/github/" and "/github" are one prefix.
    static func normalizedPrefix(_ path: String) -> String {
        var prefix = path
        while prefix.count > 1, prefix.hasSuffix("/") { prefix.removeLast() }
        return prefix
    }

    /// Empty listener lists mean every listener.
    private static func overlap(_ a: [String], _ b: [String]) -> Bool {
        a.isEmpty || b.isEmpty || !Set(a).isDisjoint(with: b)
    }

    private mutating func validateRoute(
        _ raw: ConfigMapping, listeners: Listeners, credentials: Credentials, identities: Identities
    ) -> RouteConfig? {
        let path = raw.path
        var valid = true

        // Path prefix: "/" by default; trailing slashes dropped so that "/github/" and
        // "/github" are the same prefix.
        var prefix = raw.string("path") ?? "/"
        if !prefix.hasPrefix("/") {
            diagnostics.error(path / "path", "must start with '/'", expected: "a path prefix such as /github")
            valid = false
        } else if prefix.utf8.contains(where: ConfigSyntax.endsOrBreaksPath) {
            diagnostics.error(path / "path", "contains a space, control character, '?' or '#'", expected: "a path prefix such as /github")
            valid = false
        }
        prefix = Self.normalizedPrefix(prefix)

        let givenName = raw.string("name")
        let name = givenName ?? prefix
        if givenName != nil, !ConfigSyntax.isName(name) {
            diagnostics.error(path / "name", "invalid route name", expected: ConfigSyntax.nameExpectation)
        }

        // Listeners.
        var routeListeners: [String] = []
        if let rawListeners = raw.list("listeners") {
            if rawListeners.isEmpty {
                diagnostics.error(path / "listeners", "empty list", expected: "listener names; omit the key for every listener")
            }
            for (listenerIndex, listener) in rawListeners.enumerated().compactMap({ index, node in node.string().map { (index, $0) } }) {
                if listeners.names.contains(listener) {
                    routeListeners.append(listener)
                } else if listeners.complete {
                    diagnostics.error(
                        (path / "listeners")[listenerIndex], "unknown listener\(ConfigSyntax.quoted(listener))",
                        expected: "one of " + listeners.names.sorted().joined(separator: ", ")
                    )
                }
            }
        }

        // Host.
        var host: String?
        if let rawHost = raw.string("host") {
            switch ConfigSyntax.hostOrWildcard(rawHost, allowPort: false) {
            case .success(let pattern):
                host = pattern
                checkHostAccepted(pattern, routeListeners: routeListeners, listeners: listeners, at: path / "host")
            case .failure(let failure):
                diagnostics.error(path / "host", failure.message, expected: failure.expected)
            }
        } else if let forward = routeListeners.first(where: { listeners.mode(of: $0) == .forward }) {
            // A route without host: serves reverse listeners only, where it matches by path.
            diagnostics.error(path, "missing key 'host': listener \(forward) is a forward listener, which routes each request by its target host",
                              expected: "host: the host this route serves through \(forward), e.g. host: api.github.com")
        }

        // Upstream.
        var upstream: UpstreamConfig?
        if let rawUpstream = raw.node("upstream") {
            upstream = validateUpstream(rawUpstream, ofRoute: true)
        } else {
            diagnostics.error(path, "missing key 'upstream'", expected: "the upstream's base URL, e.g. upstream: https://api.example.com")
        }

        // Prefix handling.
        var replacement: String? = ""
        let stripPrefix = raw.bool("strip_prefix")
        if let replace = raw.string("replace_prefix") {
            if stripPrefix == false {
                diagnostics.error(path / "replace_prefix", "conflicts with strip_prefix: false", expected: "either replace_prefix or strip_prefix")
            }
            if !(replace.isEmpty || replace.hasPrefix("/")) || replace.utf8.contains(where: ConfigSyntax.endsOrBreaksPath) {
                diagnostics.error(path / "replace_prefix", "must be empty or start with '/'", expected: "a path such as /v3")
            }
            replacement = replace
        } else if stripPrefix == false {
            replacement = nil
        }

        // Injections.
        var injections: [Injection] = []
        var targets: [String: Int] = [:]
        var identityInjection: (index: Int, name: String)?
        let rawInjections = raw.list("inject")
        var wroteIdentity = false
        for (injectionIndex, node) in (rawInjections ?? []).enumerated() {
            guard let rawInjection = node.mapping(
                ConfigKeys.injection, expected: "a mapping with header, query or cookie, and credential or identity") else { continue }
            let injectionPath = node.path
            if rawInjection.string("identity") != nil { wroteIdentity = true }
            guard let injection = validateInjection(rawInjection, credentials: credentials, identities: identities) else { continue }
            let key: String
            switch injection.target {
            case .header(let header): key = "header " + header.text.lowercased()
            case .query(let query): key = "query " + query
            case .cookie(let cookie): key = "cookie " + cookie
            }
            if let first = targets[key] {
                diagnostics.error(injectionPath, "injects the same \(key) as inject[\(first)]", expected: "one injection per header, query parameter or cookie")
            } else {
                targets[key] = injectionIndex
            }
            if case .identity(let name) = injection.source {
                if let first = identityInjection, first.name != name {
                    diagnostics.error(injectionPath / "identity", "a second identity on one route (inject[\(first.index)] names \(first.name))",
                                      expected: "one identity per route; several injections may use it")
                } else if identityInjection == nil {
                    identityInjection = (injectionIndex, name)
                }
            }
            injections.append(injection)
        }

        // Via.
        let via = raw.string("via")
        if let via, !ConfigSyntax.isToken(via) {
            diagnostics.error(path / "via", "invalid pseudonym", expected: "a token such as latchkey (RFC 9110 §7.6.3)")
        }

        let cookies = validateCookies(raw.mapping("cookies", ConfigKeys.cookies, expected: "a mapping"))
        let renewal = validateRenewal(raw)
        let selectable = validateSelectableIdentities(
            raw.list("selectable_identities"), injected: identityInjection?.name, wroteIdentity: wroteIdentity,
            captures: injections.compactMap(\.capture), identities: identities, at: path / "selectable_identities")
        // A capture that is the token of every identity the route may inject (TMDB's
        // `{session_id}`) is the token itself: injected as such, it costs a request no
        // lookup into the captures.
        let injectable = (identityInjection.map { [$0.name] } ?? []) + selectable
        for index in injections.indices {
            guard let capture = injections[index].capture,
                  injectable.allSatisfy({ identities.captures(of: $0)?.last == capture }) else { continue }
            injections[index].capture = nil
        }
        let handoff = validateHandoff(
            raw.mapping("handoff", ConfigKeys.handoff, expected: "a mapping with the handoff endpoint's url"),
            upstream: upstream, injects: !injections.isEmpty || rawInjections?.isEmpty == false)
        let cookieJar = validateCookieJar(raw.string("jar"), identity: identityInjection?.name, at: path / "jar")
        if cookieJar == .proxy, handoff?.beforeFirstPage == true {
            diagnostics.error(path / "handoff" / "before_first_page", "a browser's first page with jar: proxy",
                              expected: "no before_first_page: the proxy's jar is filled on the first 401 of any client")
        }

        var secretQueryParameters: [String] = []
        for (paramIndex, param) in raw.strings("secret_query_params") ?? [] {
            if ConfigSyntax.isQueryName(param) {
                secretQueryParameters.append(param)
            } else {
                diagnostics.error((path / "secret_query_params")[paramIndex], "invalid query parameter name", expected: "a name such as session_id")
            }
        }

        var allowedMethods: [String] = []
        for (methodIndex, method) in raw.strings("allow_methods") ?? [] {
            // Methods are case-sensitive (RFC 9110 §9.1): `trace` is another method.
            if RouteConfig.isRefusable(method: method) {
                allowedMethods.append(method)
            } else {
                diagnostics.error((path / "allow_methods")[methodIndex], "\(method) is not refused on any route",
                                  expected: "TRACE or CONNECT, the methods refused on routes that inject credentials")
            }
        }

        let allow = validateAllowRules(raw)
        let upgrades = validateUpgrades(raw)

        guard valid, let upstream else { return nil }
        return RouteConfig(
            name: name, listeners: routeListeners, pathPrefix: prefix, host: host, upstream: upstream,
            prefixReplacement: replacement, injections: injections,
            passClientAuthorization: raw.bool("pass_client_authorization") ?? false, preserveHost: raw.bool("preserve_host") ?? false,
            via: via, cookies: cookies, secretQueryParameters: secretQueryParameters, renewal: renewal,
            selectableIdentities: selectable, handoff: handoff, cookieJar: cookieJar, allowedMethods: allowedMethods,
            allow: allow, upgrades: upgrades
        )
    }

    /// A route's Host must pass at least one of its listeners' Host check, or it can never
    /// match.
    private mutating func checkHostAccepted(_ host: String, routeListeners: [String], listeners: Listeners, at path: ConfigPath) {
        guard listeners.complete, !Self.loopbackHostNames.contains(host) else { return }
        let candidates = listeners.configs.filter { routeListeners.isEmpty || routeListeners.contains($0.name) }
        let route = HostPattern(host)
        // A forward listener takes any target host: its routes' host: is what picks them.
        let accepted = candidates.contains { listener in
            listener.mode == .forward || listener.allowedHosts.contains { allowed in
                let name = HostAuthority.split(allowed).host
                // Some name both the route and the listener take: the same pattern, a name
                // of the listener's the route's wildcard covers, or the reverse.
                return allowed == "*" || name == host || route.matches(name) || HostPattern(String(name)).matches(host)
            }
        }
        if !accepted, !candidates.isEmpty {
            diagnostics.error(
                path, "no listener of this route accepts this Host, so the route could never match",
                expected: "the host in the allowed_hosts of the route's listeners"
            )
        }
    }

    /// `upstream: https://host/base`, or the long form with TLS, proxy and timeout settings
    /// (also an identity's `token_url:` and `issuer:`). `ofRoute`: a route's, which may name
    /// its `engine`.
    mutating func validateUpstream(_ node: ConfigNode, ofRoute: Bool = false) -> UpstreamConfig? {
        let path = node.path
        if case .scalar(let scalar) = node.content {
            return validateUpstream(url: scalar.text, at: path, long: nil)
        }
        guard let raw = node.mapping(ConfigKeys.upstream, expected: "a URL, or a mapping with url and TLS or timeout settings") else { return nil }
        guard let url = raw.string("url") else {
            diagnostics.error(path, "missing key 'url'", expected: "the upstream's base URL")
            return nil
        }
        return validateUpstream(url: url, at: path, long: raw, ofRoute: ofRoute)
    }

    /// The URL (at `path` itself in the short form, else at `path.url`) and the long form's
    /// settings.
    private mutating func validateUpstream(url: String, at path: ConfigPath, long raw: ConfigMapping?, ofRoute: Bool = false) -> UpstreamConfig? {
        let urlPath = raw == nil ? path : path / "url"
        var valid = true
        var scheme = "https"
        switch upstreamURL(url) {
        case .success(let parsed): scheme = parsed.scheme
        case .failure(let failure):
            diagnostics.error(urlPath, failure.message, expected: failure.expected)
            valid = false
        }
        var upstream = UpstreamConfig(url: url)
        guard let raw else { return valid ? upstream : nil }
        func file(_ key: String) -> String? {
            guard let value = raw.string(key) else { return nil }
            let resolved = ConfigSyntax.resolve(value, against: options.baseDirectory)
            checkReadableFile(resolved, at: path / key)
            return resolved
        }
        upstream.options.caFile = file("ca_file")
        upstream.options.clientCertificateFile = file("client_cert")
        upstream.options.clientKeyFile = file("client_key")
        if upstream.options.clientKeyFile != nil, upstream.options.clientCertificateFile == nil {
            diagnostics.error(path / "client_key", "client_key without client_cert", expected: "client_cert as well")
        }
        if scheme == "http", upstream.options.caFile != nil || upstream.options.clientCertificateFile != nil {
            diagnostics.error(urlPath, "TLS settings on a plain http upstream", expected: "an https URL")
        }
        upstream.options.http2 = raw.bool("http2") ?? false
        if let engine = raw.string("engine") {
            switch engine {
            case _ where !ofRoute:
                diagnostics.error(path / "engine", "only a route's upstream has an engine", expected: "no engine: Latchkey's own requests go through libcurl")
            case "latchkey": break
            case "libcurl": upstream.forcesLibcurl = true
            default: diagnostics.error(path / "engine", "unknown engine \"\(engine)\"", expected: "latchkey (the default) or libcurl")
            }
        }
        if let proxy = raw.string("proxy") {
            if case .failure(let failure) = ConfigSyntax.proxyURL(proxy) {
                diagnostics.error(path / "proxy", failure.message, expected: failure.expected)
            }
            upstream.options.proxy = proxy
        }
        if let value = positiveDuration(raw, "connect_timeout") { upstream.options.connectTimeout = value }
        if let value = positiveDuration(raw, "first_byte_timeout") { upstream.options.firstByteTimeout = value }
        if let value = positiveDuration(raw, "idle_timeout") { upstream.options.idleTimeout = value }
        return valid ? upstream : nil
    }

    private mutating func validateInjection(
        _ raw: ConfigMapping, credentials: Credentials, identities: Identities
    ) -> Injection? {
        let path = raw.path
        let header = raw.string("header"), query = raw.string("query"), cookie = raw.string("cookie")
        let given = [header.map { _ in "header" }, query.map { _ in "query" }, cookie.map { _ in "cookie" }].compactMap { $0 }
        var target: Injection.Target?
        if given.count != 1 {
            diagnostics.error(
                path, given.isEmpty ? "no target" : "more than one target (\(given.joined(separator: ", ")))",
                expected: "exactly one of header, query, cookie"
            )
        } else if let header {
            if let failure = ConfigSyntax.injectableHeader(header) {
                diagnostics.error(path / "header", failure.message, expected: failure.expected)
            } else {
                target = .header(HTTPField.Name(header))
            }
        } else if let query {
            if ConfigSyntax.isQueryName(query) {
                target = .query(query)
            } else {
                diagnostics.error(path / "query", "invalid query parameter name", expected: "a name such as api_key")
            }
        } else if let cookie {
            if ConfigSyntax.isToken(cookie) {
                target = .cookie(cookie)
            } else {
                diagnostics.error(path / "cookie", "invalid cookie name", expected: "a cookie name (RFC 6265 token)")
            }
        }

        let source = validateInjectionSource(raw, credentials: credentials, identities: identities)
        var template = CredentialTemplate.token
        // A recipe identity's template may name one of its captures (`{session_id}`) instead
        // of its token.
        var captures: [String] = []
        if case .identity(let name)? = source { captures = identities.captures(of: name) ?? [] }
        if let value = raw.string("value") {
            do {
                template = try CredentialTemplate(parsing: value, placeholders: CredentialTemplate.tokenPlaceholders + captures)
                let forbidden: (UInt8) -> Bool = switch target {
                // RFC 6265 §4.1.1 cookie-octet excludes these besides controls.
                case .cookie: { ConfigSyntax.isControl($0) || " \",;\\".utf8.contains($0) }
                default: ConfigSyntax.isControl
                }
                if template.literalContains(where: forbidden) {
                    diagnostics.error(path / "value", "contains characters not allowed in this field", expected: "printable text around {token}")
                }
            } catch {
                let expected = captures.isEmpty ? "text with exactly one {token}, e.g. \"Bearer {token}\""
                    : "text with exactly one {token} or capture of the identity: " + captures.map { "{\($0)}" }.joined(separator: ", ")
                diagnostics.error(path / "value", "invalid template: \(error.message)", expected: expected)
                return nil
            }
        }
        guard let target, let source else { return nil }
        let capture = CredentialTemplate.tokenPlaceholders.contains(template.placeholder) ? nil : template.placeholder
        return Injection(target: target, source: source, template: template, capture: capture)
    }

    /// Exactly one of `credential` and `identity`, naming an entry that exists.
    private mutating func validateInjectionSource(
        _ raw: ConfigMapping, credentials: Credentials, identities: Identities
    ) -> Injection.Source? {
        let path = raw.path
        switch (raw.string("credential"), raw.string("identity")) {
        case (let name?, nil):
            return known(name, in: credentials.names, kind: "credential", section: "credentials", at: path / "credential") ? .credential(name) : nil
        case (nil, let name?):
            return known(name, in: identities.names, kind: "identity", section: "identities", at: path / "identity") ? .identity(name) : nil
        case (nil, nil):
            diagnostics.error(path, "missing key 'credential' or 'identity'", expected: "the name of an entry under credentials: or identities:")
        case (.some, .some):
            diagnostics.error(path, "both credential and identity", expected: "one of credential or identity")
        }
        return nil
    }

    mutating func known(_ name: String, in names: Set<String>, kind: String, section: String, at path: ConfigPath) -> Bool {
        guard !names.contains(name) else { return true }
        let known = names.sorted()
        var message = "unknown \(kind)\(ConfigSyntax.quoted(name))"
        if let suggestion = ConfigSyntax.closestMatch(to: name, in: known) { message += "; did you mean '\(suggestion)'?" }
        diagnostics.error(path, message, expected: known.isEmpty ? "a name defined under \(section):" : "one of " + known.joined(separator: ", "))
        return false
    }

    private mutating func validateCookies(_ raw: ConfigMapping?) -> CookieRewrite {
        var rewrite = CookieRewrite()
        guard let raw else { return rewrite }
        let path = raw.path
        if let domain = raw.string("domain") {
            switch domain.lowercased() {
            case "remove": rewrite.domain = .remove
            case "keep": rewrite.domain = .keep
            default:
                let bare = domain.hasPrefix(".") ? String(domain.dropFirst()) : domain
                switch ConfigSyntax.hostPattern(bare, allowPort: false) {
                case .success(let mapped): rewrite.domain = .map(mapped)
                case .failure:
                    diagnostics.error(path / "domain", "invalid domain", expected: "remove, keep, or a domain such as localhost")
                }
            }
        }
        if let mapPath = raw.bool("map_path") { rewrite.mapPath = mapPath }
        if let dropSecure = raw.bool("drop_secure_on_loopback") { rewrite.dropSecureOnLoopback = dropSecure }
        return rewrite
    }
}
