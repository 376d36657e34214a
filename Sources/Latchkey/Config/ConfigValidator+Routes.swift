import LatchkeyUpstream
extension ConfigValidator {
    /// Host names every listener accepts without configuration.
    static let loopbackHostNames: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    mutating func validateRoutes(
        _ raw: LenientList<RawRoute>?, at path: ConfigPath, listeners: Listeners, credentials: Credentials, identities: Identities
    ) -> [RouteConfig] {
        guard let raw, !raw.items.isEmpty else {
            diagnostics.error(path, "no routes", expected: "at least one route with a path and an upstream")
            return []
        }
        var routes: [RouteConfig] = []
        var firstByName: [String: Int] = [:]
        /// (path, host) → the earlier routes with that match, to find ambiguous pairs.
        var matches: [String: [(index: Int, listeners: [String])]] = [:]
        for (index, rawRoute) in raw.decoded {
            let routePath = path[index]
            let name = rawRoute.name ?? Self.normalizedPrefix(rawRoute.path ?? "/")
            if let first = firstByName[name] {
                diagnostics.error(
                    routePath / (rawRoute.name == nil ? "path" : "name"),
                    "duplicate route name\(ConfigSyntax.quoted(name)) (also routes[\(first)])",
                    expected: rawRoute.name == nil ? "a name: for this route" : "a unique name for each route"
                )
            } else {
                firstByName[name] = index
            }
            guard let route = validateRoute(rawRoute, at: routePath, listeners: listeners, credentials: credentials, identities: identities) else { continue }
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
        _ raw: RawRoute, at path: ConfigPath, listeners: Listeners, credentials: Credentials, identities: Identities
    ) -> RouteConfig? {
        var valid = true

        // Path prefix: "/" by default; trailing slashes dropped so that "/github/" and
        // "/github" are the same prefix.
        var prefix = raw.path ?? "/"
        if !prefix.hasPrefix("/") {
            diagnostics.error(path / "path", "must start with '/'", expected: "a path prefix such as /github")
            valid = false
        } else if prefix.utf8.contains(where: { ConfigSyntax.isControl($0) || $0 == 0x20 || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            diagnostics.error(path / "path", "contains a space, control character, '?' or '#'", expected: "a path prefix such as /github")
            valid = false
        }
        prefix = Self.normalizedPrefix(prefix)

        let name = raw.name ?? prefix
        if raw.name != nil, !ConfigSyntax.isName(name) {
            diagnostics.error(path / "name", "invalid route name", expected: ConfigSyntax.nameExpectation)
        }

        // Listeners.
        var routeListeners: [String] = []
        if let rawListeners = raw.listeners {
            if rawListeners.items.isEmpty {
                diagnostics.error(path / "listeners", "empty list", expected: "listener names; omit the key for every listener")
            }
            for (listenerIndex, listener) in rawListeners.decoded {
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
        if let rawHost = raw.host {
            switch ConfigSyntax.hostPattern(rawHost, allowPort: false) {
            case .success(let pattern):
                host = pattern
                checkHostAccepted(pattern, routeListeners: routeListeners, listeners: listeners, at: path / "host")
            case .failure(let failure):
                diagnostics.error(path / "host", failure.message, expected: failure.expected)
            }
        }

        // Upstream.
        var upstream: UpstreamConfig?
        if let rawUpstream = raw.upstream {
            upstream = validateUpstream(rawUpstream, at: path / "upstream")
        } else {
            diagnostics.error(path, "missing key 'upstream'", expected: "the upstream's base URL, e.g. upstream: https://api.example.com")
        }

        // Prefix handling.
        var replacement: String? = ""
        if let replace = raw.replacePrefix {
            if raw.stripPrefix == false {
                diagnostics.error(path / "replace_prefix", "conflicts with strip_prefix: false", expected: "either replace_prefix or strip_prefix")
            }
            if !(replace.isEmpty || replace.hasPrefix("/")) || replace.utf8.contains(where: { ConfigSyntax.isControl($0) || $0 == 0x20 || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
                diagnostics.error(path / "replace_prefix", "must be empty or start with '/'", expected: "a path such as /v3")
            }
            replacement = replace
        } else if raw.stripPrefix == false {
            replacement = nil
        }

        // Injections.
        var injections: [Injection] = []
        var targets: [String: Int] = [:]
        var identityInjection: (index: Int, name: String)?
        for (injectionIndex, rawInjection) in raw.inject?.decoded ?? [] {
            let injectionPath = (path / "inject")[injectionIndex]
            guard let injection = validateInjection(rawInjection, at: injectionPath, credentials: credentials, identities: identities) else { continue }
            let key: String
            switch injection.target {
            case .header(let header): key = "header " + header.lowercased()
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
        if let via = raw.via, !ConfigSyntax.isToken(via) {
            diagnostics.error(path / "via", "invalid pseudonym", expected: "a token such as latchkey (RFC 9110 §7.6.3)")
        }

        let cookies = validateCookies(raw.cookies, at: path / "cookies")
        let renewal = validateRenewal(raw, at: path)
        let selectable = validateSelectableIdentities(
            raw.selectableIdentities, injected: identityInjection?.name,
            wroteIdentity: raw.inject?.decoded.contains { $0.element.identity != nil } ?? false,
            identities: identities, at: path / "selectable_identities")
        let handoff = validateHandoff(raw.handoff, upstream: upstream, injects: !injections.isEmpty || raw.inject?.items.isEmpty == false,
                                      at: path / "handoff")
        let cookieJar = validateCookieJar(raw.jar, identity: identityInjection?.name, at: path / "jar")
        if cookieJar == .proxy, handoff?.beforeFirstPage == true {
            diagnostics.error(path / "handoff" / "before_first_page", "a browser's first page with jar: proxy",
                              expected: "no before_first_page: the proxy's jar is filled on the first 401 of any client")
        }

        var secretQueryParameters: [String] = []
        for (paramIndex, param) in raw.secretQueryParams?.decoded ?? [] {
            if ConfigSyntax.isQueryName(param) {
                secretQueryParameters.append(param)
            } else {
                diagnostics.error((path / "secret_query_params")[paramIndex], "invalid query parameter name", expected: "a name such as session_id")
            }
        }

        var allowedMethods: [String] = []
        for (methodIndex, method) in raw.allowMethods?.decoded ?? [] {
            // Methods are case-sensitive (RFC 9110 §9.1): `trace` is another method.
            if RouteConfig.isRefusable(method: method) {
                allowedMethods.append(method)
            } else {
                diagnostics.error((path / "allow_methods")[methodIndex], "\(method) is not refused on any route",
                                  expected: "TRACE or CONNECT, the methods refused on routes that inject credentials")
            }
        }

        guard valid, let upstream else { return nil }
        return RouteConfig(
            name: name, listeners: routeListeners, pathPrefix: prefix, host: host, upstream: upstream,
            prefixReplacement: replacement, injections: injections,
            passClientAuthorization: raw.passClientAuthorization ?? false, preserveHost: raw.preserveHost ?? false,
            via: raw.via, cookies: cookies, secretQueryParameters: secretQueryParameters, renewal: renewal,
            selectableIdentities: selectable, handoff: handoff, cookieJar: cookieJar, allowedMethods: allowedMethods
        )
    }

    /// A route's Host must pass at least one of its listeners' Host check, or it can never
    /// match.
    private mutating func checkHostAccepted(_ host: String, routeListeners: [String], listeners: Listeners, at path: ConfigPath) {
        guard listeners.complete, !Self.loopbackHostNames.contains(host) else { return }
        let candidates = listeners.configs.filter { routeListeners.isEmpty || routeListeners.contains($0.name) }
        let accepted = candidates.contains { listener in
            listener.allowedHosts.contains { allowed in
                allowed == "*" || allowed == host || allowed.hasPrefix(host + ":")
            }
        }
        if !accepted, !candidates.isEmpty {
            diagnostics.error(
                path, "no listener of this route accepts this Host, so the route could never match",
                expected: "the host in the allowed_hosts of the route's listeners"
            )
        }
    }

    mutating func validateUpstream(_ raw: RawUpstream, at path: ConfigPath) -> UpstreamConfig? {
        let urlPath = raw.isShortForm ? path : path / "url"
        guard let url = raw.url else {
            diagnostics.error(path, "missing key 'url'", expected: "the upstream's base URL")
            return nil
        }
        var valid = true
        var scheme = "https"
        switch ConfigSyntax.upstreamURL(url) {
        case .success(let parsed): scheme = parsed.scheme
        case .failure(let failure):
            diagnostics.error(urlPath, failure.message, expected: failure.expected)
            valid = false
        }
        var upstream = UpstreamConfig(url: url)
        func file(_ value: String?, _ key: String) -> String? {
            guard let value else { return nil }
            let resolved = ConfigSyntax.resolve(value, against: options.baseDirectory)
            checkReadableFile(resolved, at: path / key)
            return resolved
        }
        upstream.options.caFile = file(raw.caFile, "ca_file")
        upstream.options.clientCertificateFile = file(raw.clientCert, "client_cert")
        upstream.options.clientKeyFile = file(raw.clientKey, "client_key")
        if upstream.options.clientKeyFile != nil, upstream.options.clientCertificateFile == nil {
            diagnostics.error(path / "client_key", "client_key without client_cert", expected: "client_cert as well")
        }
        if scheme == "http", raw.caFile != nil || raw.clientCert != nil {
            diagnostics.error(urlPath, "TLS settings on a plain http upstream", expected: "an https URL")
        }
        upstream.options.http2 = raw.http2 ?? false
        if let proxy = raw.proxy {
            if case .failure(let failure) = ConfigSyntax.proxyURL(proxy) {
                diagnostics.error(path / "proxy", failure.message, expected: failure.expected)
            }
            upstream.options.proxy = proxy
        }
        if let value = positiveDuration(raw.connectTimeout, at: path / "connect_timeout") { upstream.options.connectTimeout = value }
        if let value = positiveDuration(raw.firstByteTimeout, at: path / "first_byte_timeout") { upstream.options.firstByteTimeout = value }
        if let value = positiveDuration(raw.idleTimeout, at: path / "idle_timeout") { upstream.options.idleTimeout = value }
        return valid ? upstream : nil
    }

    private mutating func validateInjection(
        _ raw: RawInjection, at path: ConfigPath, credentials: Credentials, identities: Identities
    ) -> Injection? {
        let given = [raw.header.map { _ in "header" }, raw.query.map { _ in "query" }, raw.cookie.map { _ in "cookie" }].compactMap { $0 }
        var target: Injection.Target?
        if given.count != 1 {
            diagnostics.error(
                path, given.isEmpty ? "no target" : "more than one target (\(given.joined(separator: ", ")))",
                expected: "exactly one of header, query, cookie"
            )
        } else if let header = raw.header {
            if let failure = ConfigSyntax.injectableHeader(header) {
                diagnostics.error(path / "header", failure.message, expected: failure.expected)
            } else {
                target = .header(header)
            }
        } else if let query = raw.query {
            if ConfigSyntax.isQueryName(query) {
                target = .query(query)
            } else {
                diagnostics.error(path / "query", "invalid query parameter name", expected: "a name such as api_key")
            }
        } else if let cookie = raw.cookie {
            if ConfigSyntax.isToken(cookie) {
                target = .cookie(cookie)
            } else {
                diagnostics.error(path / "cookie", "invalid cookie name", expected: "a cookie name (RFC 6265 token)")
            }
        }

        let source = validateInjectionSource(raw, at: path, credentials: credentials, identities: identities)
        var template = CredentialTemplate.token
        if let value = raw.value {
            do {
                template = try CredentialTemplate(parsing: value)
                let forbidden: (UInt8) -> Bool = switch target {
                // RFC 6265 §4.1.1 cookie-octet excludes these besides controls.
                case .cookie: { ConfigSyntax.isControl($0) || " \",;\\".utf8.contains($0) }
                default: ConfigSyntax.isControl
                }
                if template.literalContains(where: forbidden) {
                    diagnostics.error(path / "value", "contains characters not allowed in this field", expected: "printable text around {token}")
                }
            } catch {
                diagnostics.error(path / "value", "invalid template: \(error.message)", expected: "text with exactly one {token}, e.g. \"Bearer {token}\"")
                return nil
            }
        }
        guard let target, let source else { return nil }
        return Injection(target: target, source: source, template: template)
    }

    /// Exactly one of `credential` and `identity`, naming an entry that exists.
    private mutating func validateInjectionSource(
        _ raw: RawInjection, at path: ConfigPath, credentials: Credentials, identities: Identities
    ) -> Injection.Source? {
        switch (raw.credential, raw.identity) {
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
        if let suggestion = closestMatch(to: name, in: known) { message += "; did you mean '\(suggestion)'?" }
        diagnostics.error(path, message, expected: known.isEmpty ? "a name defined under \(section):" : "one of " + known.joined(separator: ", "))
        return false
    }

    /// When a route renews its identity's token and replays the request.
    private mutating func validateRenewal(_ raw: RawRoute, at path: ConfigPath) -> RenewalPolicy {
        var renewal = RenewalPolicy()
        if let statuses = raw.renewOn {
            renewal.statuses = []
            for (index, status) in statuses.decoded {
                if (400...599).contains(status) {
                    renewal.statuses.insert(status)
                } else {
                    diagnostics.error((path / "renew_on")[index], "not an error status", expected: "a status from 400 to 599, such as 401")
                }
            }
        }
        if let invalidToken = raw.renewOnInvalidToken { renewal.onInvalidTokenChallenge = invalidToken }
        if let limit = raw.replayLimit?.value {
            if limit <= UInt64(Int32.max) {
                renewal.replayLimit = Int(limit)
            } else {
                diagnostics.error(path / "replay_limit", "out of range", expected: "a size up to 2GiB")
            }
        }
        return renewal
    }

    private mutating func validateCookies(_ raw: RawCookies?, at path: ConfigPath) -> CookieRewrite {
        var rewrite = CookieRewrite()
        guard let raw else { return rewrite }
        if let domain = raw.domain {
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
        if let mapPath = raw.mapPath { rewrite.mapPath = mapPath }
        if let dropSecure = raw.dropSecureOnLoopback { rewrite.dropSecureOnLoopback = dropSecure }
        return rewrite
    }
}
