import LatchkeyUpstream

extension ConfigValidator {
    mutating func validateIdentities(_ raw: [(name: String, node: ConfigNode)]?, credentials: Credentials) -> Identities {
        var result = Identities()
        for (name, entry) in raw ?? [] {
            result.names.insert(name)
            let entryPath = entry.path
            if !ConfigSyntax.isName(name) {
                diagnostics.error(entryPath, "invalid identity name", expected: ConfigSyntax.nameExpectation)
            } else if credentials.names.contains(name) {
                diagnostics.error(entryPath, "a credential has the same name", expected: "names unique across credentials and identities")
            }
            if let identity = entry.mapping(ConfigKeys.identity, expected: "a mapping with grant and token_url"),
               let config = validateIdentity(identity, name: name, credentials: credentials) {
                result.configs.append(config)
            }
        }
        return result
    }

    struct Identities {
        var configs: [IdentityConfig] = []
        /// Names that exist, including those whose entry failed to decode.
        var names: Set<String> = []

        /// The names of the captures a recipe identity makes, empty for other identities;
        /// nil when the identity failed to decode (what it makes is unknown).
        func captures(of identity: String) -> [String]? {
            guard let config = configs.first(where: { $0.name == identity }) else { return nil }
            guard case .recipe(let recipe) = config.grant else { return [] }
            return recipe.captures.map(\.name)
        }
    }

    private mutating func validateIdentity(_ raw: ConfigMapping, name: String, credentials: Credentials) -> IdentityConfig? {
        let path = raw.path
        guard let grantName = raw.string("grant") else {
            diagnostics.error(path, "missing key 'grant'", expected: "one of " + IdentityConfig.grantNames.joined(separator: ", "))
            return nil
        }
        var used: Set<String> = ["grant"]
        func secret(_ key: String) -> SecretSource? {
            used.insert(key)
            guard let node = raw.node(key) else {
                diagnostics.error(path, "missing key '\(key)'", expected: "a secret for the \(grantName) grant")
                return nil
            }
            return Self.secretMapping(node).flatMap { secretSource($0) }
        }

        let grant: IdentityConfig.Grant?
        var recipeOptions = UpstreamOptions()
        switch grantName {
        case "static":
            grant = secret("token").map { .staticToken($0) }
        case "password":
            used.insert("username")
            let username = raw.string("username")
            if username == nil { diagnostics.error(path, "missing key 'username'", expected: "the user to log in as") }
            let password = secret("password")
            grant = username.flatMap { username in password.map { .password(username: username, password: $0) } }
        case "client_credentials":
            grant = .clientCredentials
        case "refresh_token":
            grant = secret("refresh_token").map { .refreshToken($0) }
        case "custom":
            used.formUnion(["grant_type", "params"])
            grant = validateCustomGrant(raw)
        case "jwt_bearer":
            used.formUnion(["key_file", "service_account_file", "assertion_issuer", "subject", "assertion_audience", "key_id"])
            grant = validateJWTBearer(raw)
        case "token_exchange":
            used.formUnion(["subject_token_file", "subject_token_type", "requested_token_type"])
            guard let file = raw.string("subject_token_file") else {
                diagnostics.error(path, "missing key 'subject_token_file'", expected: "the file holding the token to exchange")
                return nil
            }
            let resolved = ConfigSyntax.resolve(file, against: options.baseDirectory)
            checkReadableFile(resolved, at: path / "subject_token_file")
            grant = .tokenExchange(subjectTokenFile: resolved,
                                   subjectTokenType: raw.string("subject_token_type") ?? "urn:ietf:params:oauth:token-type:jwt",
                                   requestedTokenType: raw.string("requested_token_type"))
        case "authorization_code":
            used.formUnion(["authorization_url", "redirect_port", "redirect_path"])
            grant = validateAuthorizationCode(raw)
        case "device_code":
            used.insert("device_authorization_url")
            grant = validateDeviceCode(raw)
        case "recipe":
            used.formUnion(ConfigKeys.recipe)
            let recipe = validateRecipe(raw, credentials: credentials)
            grant = recipe.map { .recipe($0.recipe) }
            recipeOptions = recipe?.idpOptions ?? recipeOptions
        default:
            diagnostics.error(path / "grant", "unknown grant\(ConfigSyntax.quoted(grantName))",
                              expected: "one of " + IdentityConfig.grantNames.joined(separator: ", "))
            return nil
        }

        // Keys that belong to other grants are mistakes, not options to ignore. The
        // identity's few keys are looked up among them, not the other way round: at 10,000
        // identities that was 3% of start-up.
        var reported: Set<String> = []
        for key in raw.keys where Self.grantKeys.contains(key) && !used.contains(key) && reported.insert(key).inserted {
            diagnostics.error(path / key, "not used by the \(grantName) grant", expected: "only the keys of the \(grantName) grant")
        }

        var config = IdentityConfig(name: name, grant: grant ?? .clientCredentials)
        switch grantName {
        case "static":
            for key in Self.tokenEndpointKeys + ["keep_warm"] where raw.contains(key) {
                diagnostics.error(path / key, "a static token has no token endpoint", expected: "only token (and acquire)")
            }
        case "recipe":
            config.idpOptions = recipeOptions
            for key in Self.tokenEndpointKeys where raw.contains(key) {
                diagnostics.error(path / key, "a recipe has no token endpoint; its steps make its credential",
                                  expected: "only the keys of the recipe grant, and acquire, keep_warm, hook, clock_skew, refresh_ahead")
            }
        default:
            validateTokenEndpoint(raw, grantName: grantName, into: &config)
            config.startupCheck = validateStartupCheck(raw)
        }
        config.scope = raw.string("scope")
        config.audience = raw.string("audience")
        config.resources = raw.strings("resource")?.map(\.value) ?? []
        switch raw.string("acquire") ?? "lazy" {
        case "lazy": config.acquireEagerly = false
        case "eager": config.acquireEagerly = true
        default: diagnostics.error(path / "acquire", "unknown value", expected: "lazy (on the first request that needs it) or eager (at start)")
        }
        config.keepWarm = raw.bool("keep_warm") ?? false
        if let hook = raw.strings("hook") {
            config.hook = hook.map(\.value)
            if config.hook.first.map({ !$0.hasPrefix("/") }) ?? true {
                diagnostics.error(path / "hook", "not an absolute command", expected: "a list: an absolute program path, then its arguments")
            }
        }
        if let skew = raw.duration("clock_skew") { config.timing.clockSkew = skew }
        if let ahead = raw.duration("refresh_ahead") { config.timing.refreshAhead = ahead }
        if config.keepWarm, config.timing.refreshAhead == .zero, grantName != "static" {
            diagnostics.error(path / "keep_warm", "refresh_ahead: 0s turns the background refresh off",
                              expected: "keep_warm: false, or refresh_ahead above 0s")
        }
        return grant == nil ? nil : config
    }

    private mutating func validateCustomGrant(_ raw: ConfigMapping) -> IdentityConfig.Grant? {
        let path = raw.path
        guard let grantType = raw.string("grant_type"), !grantType.isEmpty else {
            diagnostics.error(path, "missing key 'grant_type'", expected: "the grant_type to send, e.g. app")
            return nil
        }
        var parameters: [IdentityConfig.GrantParameter] = []
        for (name, value) in raw.entries("params") ?? [] {
            let parameterPath = value.path
            if !ConfigSyntax.isQueryName(name) || Self.reservedFormFields.contains(name) {
                diagnostics.error(parameterPath, "invalid or reserved form field name", expected: "a field name other than grant_type, client_id, client_secret, scope")
                continue
            }
            // A plain string, or a secret mapping.
            if case .scalar(let scalar) = value.content {
                parameters.append(.init(name: name, value: .literal(scalar.text)))
            } else if let secret = Self.secretMapping(value), let source = secretSource(secret) {
                parameters.append(.init(name: name, value: .secret(source)))
            }
        }
        return .custom(grantType: grantType, parameters: parameters)
    }

    private mutating func validateJWTBearer(_ raw: ConfigMapping) -> IdentityConfig.Grant? {
        let path = raw.path
        let key: IdentityConfig.JWTBearer.Key
        let issuer = raw.string("assertion_issuer")
        switch (raw.string("key_file"), raw.string("service_account_file")) {
        case (let file?, nil):
            key = .pemFile(ConfigSyntax.resolve(file, against: options.baseDirectory))
            checkReadableFile(ConfigSyntax.resolve(file, against: options.baseDirectory), at: path / "key_file")
            if issuer == nil, raw.string("client_id") == nil {
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
            key: key, issuer: issuer, subject: raw.string("subject"), audience: raw.string("assertion_audience"), keyID: raw.string("key_id")))
    }

    /// The keys of an IdP's token endpoint and of the client that calls it.
    /// The keys of one grant or another.
    private static let grantKeys = Set([
        "grant_type", "params", "username", "password", "refresh_token", "token", "key_file", "service_account_file",
        "assertion_issuer", "subject", "assertion_audience", "key_id", "subject_token_file", "subject_token_type", "requested_token_type",
        "authorization_url", "redirect_port", "redirect_path", "device_authorization_url",
    ] + ConfigKeys.recipe)

    private static let tokenEndpointKeys = [
        "token_url", "issuer", "client_id", "client_secret", "client_auth", "client_key_file", "client_key_id",
        "scope", "audience", "resource", "check_on_start", "userinfo_url", "introspection_url", "revocation_url",
    ]

    /// Form fields Latchkey sets itself.
    private static let reservedFormFields: Set<String> = ["grant_type", "client_id", "client_secret", "scope", "client_assertion", "client_assertion_type"]

    private mutating func validateTokenEndpoint(_ raw: ConfigMapping, grantName: String, into config: inout IdentityConfig) {
        let path = raw.path
        switch (raw.node("token_url"), raw.node("issuer")) {
        case (let endpoint?, nil):
            if let upstream = validateUpstream(endpoint) {
                config.tokenURL = upstream.url
                config.idpOptions = upstream.options
            }
        case (nil, let issuer?):
            if let upstream = validateUpstream(issuer) {
                config.issuer = upstream.url
                config.idpOptions = upstream.options
            }
        case (nil, nil):
            if raw.string("service_account_file") == nil {
                diagnostics.error(path, "missing key 'token_url' or 'issuer'", expected: "the IdP's token endpoint URL, or its issuer URL for discovery")
            }
        case (.some, .some):
            diagnostics.error(path, "both token_url and issuer", expected: "token_url, or issuer to discover it")
        }
        if let url = raw.string("revocation_url") {
            if case .failure(let failure) = upstreamURL(url) {
                diagnostics.error(path / "revocation_url", failure.message, expected: failure.expected)
            }
            config.revocationURL = url
        }
        config.clientID = raw.string("client_id")
        let clientSecret = raw.node("client_secret")
        if let clientSecret { config.clientSecret = Self.secretMapping(clientSecret).flatMap { secretSource($0) } }
        let method: IdentityConfig.ClientAuthMethod
        if let name = raw.string("client_auth") {
            guard let parsed = IdentityConfig.ClientAuthMethod(rawValue: name) else {
                diagnostics.error(path / "client_auth", "unknown client authentication",
                                  expected: "one of " + IdentityConfig.ClientAuthMethod.allCases.map(\.rawValue).joined(separator: ", "))
                return
            }
            method = parsed
        } else {
            method = clientSecret == nil ? .none : .clientSecretBasic
        }
        config.clientAuth = method
        let usesSecret = method == .clientSecretBasic || method == .clientSecretPost
        if usesSecret, clientSecret == nil {
            diagnostics.error(path, "client_auth \(method.rawValue) without client_secret", expected: "client_secret, or client_auth: none")
        }
        if !usesSecret, clientSecret != nil {
            diagnostics.error(path / "client_auth", "\(method.rawValue), but a client_secret is given", expected: "client_secret_basic or client_secret_post")
        }
        if method == .privateKeyJWT {
            if let file = raw.string("client_key_file") {
                let resolved = ConfigSyntax.resolve(file, against: options.baseDirectory)
                config.clientKeyFile = resolved
                checkReadableFile(resolved, at: path / "client_key_file")
                config.clientKeyID = raw.string("client_key_id")
            } else {
                diagnostics.error(path, "client_auth private_key_jwt without client_key_file", expected: "the PEM key that signs the client assertions")
            }
        } else if let key = ["client_key_file", "client_key_id"].first(where: { raw.node($0) != nil }) {
            diagnostics.error(path / key, "only used by client_auth: private_key_jwt",
                              expected: "client_auth: private_key_jwt, or no client key")
        }
        // A public client (client_auth: none) still names itself in a login.
        let namesClient = ["client_credentials", "authorization_code", "device_code"].contains(grantName)
        if method != .none || namesClient, config.clientID == nil {
            diagnostics.error(path, "missing key 'client_id'", expected: "the client's id at the IdP")
        }
    }
}
