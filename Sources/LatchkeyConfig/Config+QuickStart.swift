import LatchkeyHTTP

extension Config {
    /// The label problems from the command line carry in place of a file name.
    public static let commandLineSource = "command line"

    /// The configuration for `latchkey serve --listen … --upstream … --header …
    /// --bearer-token-file …`: one listener, one route `default` for every path, and one
    /// credential per injected header.
    ///
    /// - Parameters:
    ///   - listen: the listen address; `127.0.0.1:8080` when nil. Only loopback and Unix
    ///     sockets: a reachable listener needs inbound settings, which only a file gives.
    ///   - upstream: the base URL every request goes to.
    ///   - headers: `Name: value` each; the value is a literal secret (a credential named
    ///     `header-1`, `header-2`, … so that logs redact it).
    ///   - bearerTokenFile: a file holding a token, sent as `Authorization: Bearer <token>`
    ///     and re-read when the file changes (credential `bearer-token`).
    public static func quickStart(
        listen: String?, upstream: String, headers: [String], bearerTokenFile: String?
    ) throws(ConfigErrors) -> Config {
        var flags = QuickStartFlags()
        var address = ConfigValidator.defaultListen
        if let listen {
            switch ConfigSyntax.listenAddress(listen, baseDirectory: nil) {
            case .success(let parsed):
                address = parsed
                if !ConfigSyntax.isLocalOnly(parsed) {
                    flags.problem(
                        "--listen", "a listener on \(parsed) can be reached from other machines; "
                            + "use a config file with inbound.shared_secret or inbound.open: true",
                        expected: "a loopback address such as 127.0.0.1:8080, or unix:/path"
                    )
                }
            case .failure(let failure):
                flags.problem("--listen", failure.message, expected: failure.expected)
            }
        }
        flags.checkUpstream(upstream)
        flags.attach(headers: headers, bearerTokenFile: bearerTokenFile)
        try flags.throwProblems()
        return Config(
            listeners: [ListenerConfig(name: "main", address: address)],
            routes: [RouteConfig(name: "default", upstream: UpstreamConfig(url: upstream), injections: flags.injections)],
            credentials: flags.credentials
        )
    }

    /// The configuration for `latchkey exec --host … --header … --bearer-token-file …`:
    /// one route per host, `host-1`, `host-2`, …, each sending every request for its host
    /// to `https://HOST` (or to `upstream`) with the headers attached; no listener (exec
    /// makes its own, `forExec`).
    public static func quickStart(hosts: [String], upstream: String?, headers: [String], bearerTokenFile: String?) throws(ConfigErrors) -> Config {
        var flags = QuickStartFlags()
        if let upstream { flags.checkUpstream(upstream) }
        flags.attach(headers: headers, bearerTokenFile: bearerTokenFile)
        var routes: [RouteConfig] = []
        for (index, text) in hosts.enumerated() {
            switch ConfigSyntax.hostPattern(text, allowPort: false) {
            case .success(let host) where !host.hasPrefix("["):
                routes.append(RouteConfig(name: "host-\(index + 1)", host: host, upstream: UpstreamConfig(url: upstream ?? "https://\(host)"),
                                          injections: flags.injections))
            case .success, .failure:
                flags.problem("--host #\(index + 1)", "not a host name", expected: "a host name such as api.example.com, without port or scheme")
            }
        }
        if hosts.isEmpty { flags.problem("--host", "no host given", expected: "--host api.example.com (repeatable)") }
        try flags.throwProblems()
        return Config(listeners: [], routes: routes, credentials: flags.credentials)
    }
}

/// The flags both quick starts share: the headers to attach, each a credential of its own
/// (so that logs redact it), and the problems found in them.
private struct QuickStartFlags {
    private(set) var credentials: [String: SecretSource] = [:]
    private(set) var injections: [Injection] = []
    private var problems: [ConfigProblem] = []

    /// `headers` (`Name: value` each) and the bearer token file become credentials and
    /// their injections.
    mutating func attach(headers: [String], bearerTokenFile: String?) {
        var injected: Set<String> = []
        for (index, header) in headers.enumerated() {
            let flag = "--header #\(index + 1)"
            guard let colon = header.firstIndex(of: ":") else {
                problem(flag, "missing ':'", expected: "'Name: value'")
                continue
            }
            let name = String(header[..<colon]).trimmingASCIIWhitespace()
            let value = String(header[header.index(after: colon)...]).trimmingASCIIWhitespace()
            if let failure = ConfigSyntax.injectableHeader(name) {
                problem(flag, failure.message, expected: failure.expected)
                continue
            }
            do {
                _ = try SecretResolver.validate(value, origin: "the header value")
            } catch {
                problem(flag, error.message, expected: "'Name: value' with a non-empty value on one line")
                continue
            }
            if !injected.insert(name.lowercased()).inserted {
                problem(flag, "the header\(ConfigSyntax.quoted(name)) is given twice", expected: "each header once")
                continue
            }
            let credential = "header-\(index + 1)"
            credentials[credential] = .inline(value)
            injections.append(Injection(target: .header(HTTPField.Name(name)), source: .credential(credential), template: .token))
        }

        guard let bearerTokenFile else { return }
        if bearerTokenFile.isEmpty {
            problem("--bearer-token-file", "empty path", expected: "the path of a file holding the token")
        } else if !injected.insert("authorization").inserted {
            problem("--bearer-token-file", "an Authorization header is also given with --header", expected: "one of the two")
        } else {
            do {
                _ = try SecretResolver.resolve(.file(bearerTokenFile), environment: [:])
            } catch {
                problem("--bearer-token-file", error.message, expected: "a readable file holding the token")
            }
            credentials["bearer-token"] = .file(bearerTokenFile)
            injections.append(Injection(
                target: .header("Authorization"), source: .credential("bearer-token"),
                template: CredentialTemplate(prefix: "Bearer ")
            ))
        }
    }

    mutating func problem(_ flag: String, _ message: String, expected: String? = nil) {
        problems.append(ConfigProblem(file: Config.commandLineSource, path: flag, message: message, expected: expected))
    }

    mutating func checkUpstream(_ upstream: String) {
        if case .failure(let failure) = ConfigSyntax.upstreamURL(upstream) {
            problem("--upstream", failure.message, expected: failure.expected)
        }
    }

    func throwProblems() throws(ConfigErrors) {
        guard problems.isEmpty else { throw ConfigErrors(problems) }
    }
}
