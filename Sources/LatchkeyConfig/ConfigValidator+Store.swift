extension ConfigValidator {
    mutating func validateStore(_ raw: ConfigMapping?) -> TokenStoreSettings {
        var settings = TokenStoreSettings()
        guard let raw else { return settings }
        let path = raw.path
        if let type = raw.string("type") {
            if let kind = TokenStoreSettings.Kind(rawValue: type) {
                settings.kind = kind
            } else {
                // The paths are still checked, as a file store's.
                diagnostics.error(path / "type", "unknown store type", expected: "file (the default), redis or memory")
            }
        }
        let keys: [(key: String, usedBy: [TokenStoreSettings.Kind])] = [
            // With Redis, the directory keeps what is not a token: the identities `latchkey
            // use` chose for routes (RouteIdentityFile).
            ("path", [.file, .redis]),
            ("key_file", [.file, .redis]),
            ("url", [.redis]),
            ("key_prefix", [.redis]),
            ("password", [.redis]),
        ]
        // A value of the wrong type is reported as such, not as unused.
        func given(_ key: String) -> Bool {
            key == "password" ? raw.node(key).flatMap(Self.secretMapping) != nil : raw.string(key) != nil
        }
        for (key, usedBy) in keys where given(key) && !usedBy.contains(settings.kind) {
            diagnostics.error(path / key, "not used by the \(settings.kind.rawValue) store",
                              expected: "type: \(usedBy.map(\.rawValue).joined(separator: " or ")), or no \(key)")
        }
        guard settings.kind != .memory else { return settings }
        settings.directory = storePath(raw.string("path"), at: path / "path", expected: settings.kind == .file
            ? "the directory for the token files" : "the directory for the identities chosen with latchkey use")
        if settings.kind == .redis { settings.redis = validateRedis(raw, at: path) }
        settings.keyFile = storePath(raw.string("key_file"), at: path / "key_file", expected: "the file holding the store key")
        if let keyFile = settings.keyFile { checkReadableFile(keyFile, at: path / "key_file") }
        return settings
    }

    private mutating func validateRedis(_ raw: ConfigMapping, at path: ConfigPath) -> TokenStoreSettings.Redis? {
        var password: SecretSource?
        if let secret = raw.node("password").flatMap(Self.secretMapping) {
            if secret.node("value") != nil {
                diagnostics.error(path / "password", "an inline password would sit in the configuration's text",
                                  expected: "{env: NAME} or {file: PATH}")
            } else {
                password = secretSource(secret)
            }
        }
        let keyPrefix = raw.string("key_prefix") ?? TokenStoreSettings.Redis.defaultKeyPrefix
        if keyPrefix.utf8.contains(where: ConfigSyntax.isControl) || keyPrefix.contains(" ") {
            diagnostics.error(path / "key_prefix", "spaces or control characters in the key prefix", expected: "a prefix such as latchkey:")
        }
        guard let url = raw.string("url") else {
            diagnostics.error(path, "missing key 'url'", expected: "the Redis server, e.g. redis://127.0.0.1:6379/0")
            return nil
        }
        do {
            return TokenStoreSettings.Redis(endpoint: try RedisEndpoint(url: url), keyPrefix: keyPrefix, password: password)
        } catch {
            diagnostics.error(path / "url", error.message, expected: nil)
            return nil
        }
    }

    /// A path taken against the config file's directory. `~` is not a shell's: refused
    /// rather than taken as a directory named "~".
    mutating func storePath(_ raw: String?, at path: ConfigPath, expected: String) -> String? {
        guard let raw else { return nil }
        guard !raw.isEmpty, !raw.utf8.contains(0) else {
            diagnostics.error(path, raw.isEmpty ? "empty path" : "NUL in the path", expected: expected)
            return nil
        }
        guard !raw.hasPrefix("~") else {
            diagnostics.error(path, "'~' is not expanded", expected: "an absolute path, or one relative to the config file")
            return nil
        }
        return ConfigSyntax.resolve(raw, against: options.baseDirectory)
    }
}
