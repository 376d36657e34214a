import LatchkeyAuth

extension ConfigValidator {
    mutating func validateIdentities(_ raw: LenientMap<RawIdentity>?, at path: ConfigPath, credentials: Credentials) -> Identities {
        var result = Identities()
        for (name, identity) in raw?.entries ?? [] {
            result.names.insert(name)
            let entryPath = path / name
            if !ConfigSyntax.isName(name) {
                diagnostics.error(entryPath, "invalid identity name", expected: ConfigSyntax.nameExpectation)
            } else if credentials.names.contains(name) {
                diagnostics.error(entryPath, "a credential has the same name", expected: "names unique across credentials and identities")
            }
            if let identity, let config = validateIdentity(identity, name: name, at: entryPath) {
                result.configs.append(config)
            }
        }
        return result
    }

    struct Identities {
        var configs: [IdentityConfig] = []
        /// Names that exist, including those whose entry failed to decode.
        var names: Set<String> = []
    }

    private mutating func validateIdentity(_ raw: RawIdentity, name: String, at path: ConfigPath) -> IdentityConfig? {
        guard let grantName = raw.grant else {
            diagnostics.error(path, "missing key 'grant'", expected: "one of " + IdentityConfig.grantNames.joined(separator: ", "))
            return nil
        }
        var used: Set<RawIdentity.CodingKeys> = [.grant]
        func secret(_ raw: RawSecret?, _ key: RawIdentity.CodingKeys) -> SecretSource? {
            used.insert(key)
            guard let raw else {
                diagnostics.error(path, "missing key '\(key.stringValue)'", expected: "a secret for the \(grantName) grant")
                return nil
            }
            return secretSource(raw, at: path / key.stringValue)
        }

        let grant: IdentityConfig.Grant?
        switch grantName {
        case "static":
            grant = secret(raw.token, .token).map { .staticToken($0) }
        case "password":
            used.insert(.username)
            if raw.username == nil { diagnostics.error(path, "missing key 'username'", expected: "the user to log in as") }
            let password = secret(raw.password, .password)
            grant = raw.username.flatMap { username in password.map { .password(username: username, password: $0) } }
        case "client_credentials":
            grant = .clientCredentials
        case "refresh_token":
            grant = secret(raw.refreshToken, .refresh_token).map { .refreshToken($0) }
        case "custom":
            used.formUnion([.grant_type, .params])
            grant = validateCustomGrant(raw, at: path)
        case "jwt_bearer":
            used.formUnion([.key_file, .service_account_file, .assertion_issuer, .subject, .assertion_audience, .key_id])
            grant = validateJWTBearer(raw, at: path)
        case "token_exchange":
            used.formUnion([.subject_token_file, .subject_token_type, .requested_token_type])
            guard let file = raw.subjectTokenFile else {
                diagnostics.error(path, "missing key 'subject_token_file'", expected: "the file holding the token to exchange")
                return nil
            }
            let resolved = ConfigSyntax.resolve(file, against: options.baseDirectory)
            checkReadableFile(resolved, at: path / "subject_token_file")
            grant = .tokenExchange(subjectTokenFile: resolved,
                                   subjectTokenType: raw.subjectTokenType ?? "urn:ietf:params:oauth:token-type:jwt",
                                   requestedTokenType: raw.requestedTokenType)
        case "authorization_code":
            used.formUnion([.authorization_url, .redirect_port, .redirect_path])
            grant = validateAuthorizationCode(raw, at: path)
        case "device_code":
            used.insert(.device_authorization_url)
            grant = validateDeviceCode(raw, at: path)
        default:
            diagnostics.error(path / "grant", "unknown grant\(ConfigSyntax.quoted(grantName))",
                              expected: "one of " + IdentityConfig.grantNames.joined(separator: ", "))
            return nil
        }

        // Keys that belong to other grants are mistakes, not options to ignore.
        let grantKeys: [RawIdentity.CodingKeys] = [
            .grant_type, .params, .username, .password, .refresh_token, .token, .key_file, .service_account_file,
            .assertion_issuer, .subject, .assertion_audience, .key_id, .subject_token_file, .subject_token_type, .requested_token_type,
            .authorization_url, .redirect_port, .redirect_path, .device_authorization_url,
        ]
        for key in grantKeys where !used.contains(key) && raw.present.contains(key) {
            diagnostics.error(path / key.stringValue, "not used by the \(grantName) grant", expected: "only the keys of the \(grantName) grant")
        }

        var config = IdentityConfig(name: name, grant: grant ?? .clientCredentials)
        if grantName == "static" {
            for key: RawIdentity.CodingKeys in [.token_url, .issuer, .client_id, .client_secret, .client_auth, .client_key_file, .client_key_id,
                                                .scope, .audience, .resource, .check_on_start, .userinfo_url, .introspection_url, .revocation_url,
                                                .keep_warm]
            where raw.present.contains(key) {
                diagnostics.error(path / key.stringValue, "a static token has no token endpoint", expected: "only token (and acquire)")
            }
        } else {
            validateTokenEndpoint(raw, into: &config, at: path)
            config.startupCheck = validateStartupCheck(raw, at: path)
        }
        config.scope = raw.scope
        config.audience = raw.audience
        config.resources = raw.resource?.decoded.map(\.element) ?? []
        switch raw.acquire ?? "lazy" {
        case "lazy": config.acquireEagerly = false
        case "eager": config.acquireEagerly = true
        default: diagnostics.error(path / "acquire", "unknown value", expected: "lazy (on the first request that needs it) or eager (at start)")
        }
        config.keepWarm = raw.keepWarm ?? false
        if let hook = raw.hook {
            config.hook = hook.decoded.map(\.element)
            if config.hook.first.map({ !$0.hasPrefix("/") }) ?? true {
                diagnostics.error(path / "hook", "not an absolute command", expected: "a list: an absolute program path, then its arguments")
            }
        }
        if let skew = raw.clockSkew?.value { config.timing.clockSkew = skew }
        if let ahead = raw.refreshAhead?.value { config.timing.refreshAhead = ahead }
        if config.keepWarm, config.timing.refreshAhead == .zero, grantName != "static" {
            diagnostics.error(path / "keep_warm", "refresh_ahead: 0s turns the background refresh off",
                              expected: "keep_warm: false, or refresh_ahead above 0s")
        }
        return grant == nil ? nil : config
    }

    private mutating func validateCustomGrant(_ raw: RawIdentity, at path: ConfigPath) -> IdentityConfig.Grant? {
        guard let grantType = raw.grantType, !grantType.isEmpty else {
            diagnostics.error(path, "missing key 'grant_type'", expected: "the grant_type to send, e.g. app")
            return nil
        }
        var parameters: [IdentityConfig.GrantParameter] = []
        for (name, value) in raw.params?.entries ?? [] {
            let parameterPath = path / "params" / name
            if !ConfigSyntax.isQueryName(name) || Self.reservedFormFields.contains(name) {
                diagnostics.error(parameterPath, "invalid or reserved form field name", expected: "a field name other than grant_type, client_id, client_secret, scope")
                continue
            }
            switch value {
            case .literal(let text): parameters.append(.init(name: name, value: .literal(text)))
            case .secret(let rawSecret):
                if let source = secretSource(rawSecret, at: parameterPath) { parameters.append(.init(name: name, value: .secret(source))) }
            case nil: break
            }
        }
        return .custom(grantType: grantType, parameters: parameters)
    }

    private mutating func validateJWTBearer(_ raw: RawIdentity, at path: ConfigPath) -> IdentityConfig.Grant? {
        let key: IdentityConfig.JWTBearer.Key
        switch (raw.keyFile, raw.serviceAccountFile) {
        case (let file?, nil):
            key = .pemFile(ConfigSyntax.resolve(file, against: options.baseDirectory))
            checkReadableFile(ConfigSyntax.resolve(file, against: options.baseDirectory), at: path / "key_file")
            if raw.assertionIssuer == nil, raw.clientID == nil {
                diagnostics.error(path, "missing key 'assertion_issuer'", expected: "the assertion's iss (or a client_id, used by default)")
            }
        case (nil, let file?):
            key = .serviceAccountFile(ConfigSyntax.resolve(file, against: options.baseDirectory))
            checkReadableFile(ConfigSyntax.resolve(file, against: options.baseDirectory), at: path / "service_account_file")
        case (nil, nil):
            diagnostics.error(path, "missing key 'key_file' or 'service_account_file'", expected: "the key that signs the grant's assertion")
            return nil
        case (.some, .some):
            diagnostics.error(path, "both key_file and service_account_file", expected: "one of them")
            return nil
        }
        return .jwtBearer(IdentityConfig.JWTBearer(
            key: key, issuer: raw.assertionIssuer, subject: raw.subject, audience: raw.assertionAudience, keyID: raw.keyID))
    }

    /// Form fields Latchkey sets itself.
    private static let reservedFormFields: Set<String> = ["grant_type", "client_id", "client_secret", "scope", "client_assertion", "client_assertion_type"]

    private mutating func validateTokenEndpoint(_ raw: RawIdentity, into config: inout IdentityConfig, at path: ConfigPath) {
        switch (raw.tokenURL, raw.issuer) {
        case (let endpoint?, nil):
            if let upstream = validateUpstream(endpoint, at: path / "token_url") {
                config.tokenURL = upstream.url
                config.idpOptions = upstream.options
            }
        case (nil, let issuer?):
            if let upstream = validateUpstream(issuer, at: path / "issuer") {
                config.issuer = upstream.url
                config.idpOptions = upstream.options
            }
        case (nil, nil):
            if raw.serviceAccountFile == nil {
                diagnostics.error(path, "missing key 'token_url' or 'issuer'", expected: "the IdP's token endpoint URL, or its issuer URL for discovery")
            }
        case (.some, .some):
            diagnostics.error(path, "both token_url and issuer", expected: "token_url, or issuer to discover it")
        }
        if let url = raw.revocationURL {
            if case .failure(let failure) = ConfigSyntax.upstreamURL(url) {
                diagnostics.error(path / "revocation_url", failure.message, expected: failure.expected)
            }
            config.revocationURL = url
        }
        config.clientID = raw.clientID
        if let rawSecret = raw.clientSecret { config.clientSecret = secretSource(rawSecret, at: path / "client_secret") }
        let method: IdentityConfig.ClientAuthMethod
        if let name = raw.clientAuth {
            guard let parsed = IdentityConfig.ClientAuthMethod(rawValue: name) else {
                diagnostics.error(path / "client_auth", "unknown client authentication",
                                  expected: "one of " + IdentityConfig.ClientAuthMethod.allCases.map(\.rawValue).joined(separator: ", "))
                return
            }
            method = parsed
        } else {
            method = raw.clientSecret == nil ? .none : .clientSecretBasic
        }
        config.clientAuth = method
        let usesSecret = method == .clientSecretBasic || method == .clientSecretPost
        if usesSecret, raw.clientSecret == nil {
            diagnostics.error(path, "client_auth \(method.rawValue) without client_secret", expected: "client_secret, or client_auth: none")
        }
        if !usesSecret, raw.clientSecret != nil {
            diagnostics.error(path / "client_auth", "\(method.rawValue), but a client_secret is given", expected: "client_secret_basic or client_secret_post")
        }
        if method == .privateKeyJWT {
            if let file = raw.clientKeyFile {
                config.clientKeyFile = ConfigSyntax.resolve(file, against: options.baseDirectory)
                checkReadableFile(config.clientKeyFile!, at: path / "client_key_file")
                config.clientKeyID = raw.clientKeyID
            } else {
                diagnostics.error(path, "client_auth private_key_jwt without client_key_file", expected: "the PEM key that signs the client assertions")
            }
        } else if raw.clientKeyFile != nil || raw.clientKeyID != nil {
            diagnostics.error(path / (raw.clientKeyFile != nil ? "client_key_file" : "client_key_id"), "only used by client_auth: private_key_jwt",
                              expected: "client_auth: private_key_jwt, or no client key")
        }
        // A public client (client_auth: none) still names itself in a login.
        let namesClient = ["client_credentials", "authorization_code", "device_code"].contains(raw.grant ?? "")
        if method != .none || namesClient, raw.clientID == nil {
            diagnostics.error(path, "missing key 'client_id'", expected: "the client's id at the IdP")
        }
    }
}
